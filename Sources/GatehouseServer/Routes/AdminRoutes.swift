import Foundation
import GatehouseProtocol
import Hummingbird

/// The admin API under `/admin/v1`, for operators and the web console: bearer tokens of confidential clients
/// holding `gatehouse.admin` (everything) or `gatehouse.admin.read` (reads only). Errors are
/// `{"errorCode","errorMsg"}`.
struct AdminRoutes<Context: ClientRequestContext> {
    let admin: AdminService

    func add(to router: Router<Context>) {
        let api = router.group("admin/v1")
        api.get("registrations") { request, context in
            _ = try await admin.authorize(request.headers[.authorization], write: false, connection: context)
            return Self.answer(try await admin.registrations(Self.registrationQuery(RequestReading.query(request))))
        }
        api.get("registrations/:clientId") { request, context in
            _ = try await admin.authorize(request.headers[.authorization], write: false, connection: context)
            return Self.answer(try await admin.client(try context.parameters.require("clientId")))
        }
        api.delete("registrations/:clientId") { request, context in
            let actor = try await admin.authorize(request.headers[.authorization], write: true, connection: context)
            let clientID = try context.parameters.require("clientId")
            try await admin.deleteRegistration(clientID, actor: actor, address: context.clientAddress)
            return Self.answer(["deleted": .string(clientID)])
        }
        api.post("registrations/:clientId/revoke") { request, context in
            let actor = try await admin.authorize(request.headers[.authorization], write: true, connection: context)
            let clientID = try context.parameters.require("clientId")
            try await admin.revokeTokens(clientID, actor: actor, address: context.clientAddress)
            return Self.answer(["revoked": .string(clientID)])
        }
        api.post("registrations/:clientId/checks/:check/reset") { request, context in
            let actor = try await admin.authorize(request.headers[.authorization], write: true, connection: context)
            return Self.answer(try await admin.resetCheck(
                try context.parameters.require("clientId"), check: try context.parameters.require("check"),
                actor: actor, address: context.clientAddress))
        }
        api.get("devices") { request, context in
            _ = try await admin.authorize(request.headers[.authorization], write: false, connection: context)
            return Self.answer(try await admin.devices(Self.registrationQuery(RequestReading.query(request), byDisplayName: true)))
        }
        api.get("devices/:deviceId") { request, context in
            _ = try await admin.authorize(request.headers[.authorization], write: false, connection: context)
            return Self.answer(try await admin.device(try context.parameters.require("deviceId")))
        }
        api.put("devices/:deviceId") { request, context in
            let actor = try await admin.authorize(request.headers[.authorization], write: true, connection: context)
            var request = request
            let body = try await RequestReading.body(of: &request, upTo: 64 * 1024, tooLarge: "A device's status is limited to 64 KiB.")
            guard let json = try? JSONDecoder().decode(JSON.self, from: Data(body.readableBytesView)) else {
                throw AdminError.invalidRequest("The body must be JSON: {\"status\": \"LOST\", \"blockedApplications\": [...]}.")
            }
            return Self.answer(try await admin.setDevice(try context.parameters.require("deviceId"), body: json, actor: actor,
                                                         address: context.clientAddress))
        }
        api.delete("devices/:deviceId") { request, context in
            let actor = try await admin.authorize(request.headers[.authorization], write: true, connection: context)
            let deviceID = try context.parameters.require("deviceId")
            let deleted = try await admin.deleteDevice(deviceID, actor: actor, address: context.clientAddress)
            return Self.answer(["deleted": .string(deviceID), "registrations": .array(deleted.map { .string($0) })])
        }
        api.get("users/:username") { request, context in
            _ = try await admin.authorize(request.headers[.authorization], write: false, connection: context)
            return Self.answer(try await admin.user(Self.decoded(try context.parameters.require("username"))))
        }
        api.delete("users/:username/factors/:factor") { request, context in
            let actor = try await admin.authorize(request.headers[.authorization], write: true, connection: context)
            return Self.answer(try await admin.resetFactor(
                Self.decoded(try context.parameters.require("username")), factor: Self.decoded(try context.parameters.require("factor")),
                actor: actor, address: context.clientAddress))
        }
        api.get("accounts") { request, context in
            _ = try await admin.authorize(request.headers[.authorization], write: false, connection: context)
            return Self.answer(try await admin.lockedAccounts(limit: Self.limit(RequestReading.query(request))))
        }
        api.delete("accounts/:account") { request, context in
            let actor = try await admin.authorize(request.headers[.authorization], write: true, connection: context)
            // Percent-decoded: a browser sends `user%3Ajohn` (and a user name may hold spaces).
            let account = Self.decoded(try context.parameters.require("account"))
            try await admin.unlock(account, actor: actor, address: context.clientAddress)
            return Self.answer(["unlocked": .string(account)])
        }
        api.get("keys") { request, context in
            _ = try await admin.authorize(request.headers[.authorization], write: false, connection: context)
            return Self.answer(try await admin.keys())
        }
        api.post("keys") { request, context in
            let actor = try await admin.authorize(request.headers[.authorization], write: true, connection: context)
            let kid = try await admin.rotateKey(actor: actor, address: context.clientAddress)
            return Self.answer(["kid": .string(kid)], status: .created)
        }
        api.post("keys/:kid/retire") { request, context in
            let actor = try await admin.authorize(request.headers[.authorization], write: true, connection: context)
            let kid = try context.parameters.require("kid")
            let retiredNow = try await admin.retireKey(kid, actor: actor, address: context.clientAddress)
            return Self.answer(["retired": .string(kid), "alreadyRetired": .bool(!retiredNow)])
        }
        api.get("applications") { request, context in
            _ = try await admin.authorize(request.headers[.authorization], write: false, connection: context)
            return Self.answer(try await admin.applications())
        }
        api.put("applications/:application/:platform/versions") { request, context in
            let actor = try await admin.authorize(request.headers[.authorization], write: true, connection: context)
            var request = request
            let body = try await RequestReading.body(of: &request, upTo: 64 * 1024, tooLarge: "Version rules are limited to 64 KiB.")
            guard let rules = try? JSONDecoder().decode(JSON.self, from: Data(body.readableBytesView)) else {
                throw AdminError.invalidRequest("The body must be JSON: {\"versions\": [...]}.")
            }
            return Self.answer(try await admin.setVersions(
                application: try context.parameters.require("application"), platform: try context.parameters.require("platform"),
                body: rules, actor: actor, address: context.clientAddress))
        }
        api.get("policy") { request, context in
            _ = try await admin.authorize(request.headers[.authorization], write: false, connection: context)
            return Self.answer(admin.policy())
        }
        api.get("policy/source") { request, context in
            let actor = try await admin.authorize(request.headers[.authorization], write: true, connection: context)
            return Self.answer(await admin.policySource(actor: actor, address: context.clientAddress))
        }
        api.put("policy") { request, context in
            let actor = try await admin.authorize(request.headers[.authorization], write: true, connection: context)
            var request = request
            let body = try await RequestReading.body(of: &request, upTo: 1024 * 1024, tooLarge: "A policy is limited to 1 MiB.")
            return Self.answer(try await admin.applyPolicy(
                yaml: String(decoding: body.readableBytesView, as: UTF8.self), actor: actor, address: context.clientAddress))
        }
        api.post("policy/validate") { request, context in
            _ = try await admin.authorize(request.headers[.authorization], write: false, connection: context)
            var request = request
            let body = try await RequestReading.body(of: &request, upTo: 1024 * 1024, tooLarge: "A policy is limited to 1 MiB.")
            return Self.answer(admin.validatePolicy(yaml: String(decoding: body.readableBytesView, as: UTF8.self)))
        }
        api.get("audit") { request, context in
            _ = try await admin.authorize(request.headers[.authorization], write: false, connection: context)
            let query = RequestReading.query(request)
            return Self.answer(try await admin.audit(after: Self.auditAfter(query), limit: Self.limit(query)))
        }
        api.get("activity") { request, context in
            _ = try await admin.authorize(request.headers[.authorization], write: false, connection: context)
            let query = RequestReading.query(request), now = EpochTime.nowMillis()
            let bucketSec = try Self.wholeNumber(query, "bucketSec", default: 60, in: 1...AdminService.maxBucketSec)
            let since = try Self.wholeNumber(query, "sinceMs", default: max(now - 3_600_000, 0), in: 0...now)
            return Self.answer(try await admin.activity(since: since, bucketSec: bucketSec, now: now))
        }
    }

    /// A path parameter percent-decoded: a browser sends `user%3Ajohn` (and names may hold spaces).
    static func decoded(_ raw: String) -> String { raw.removingPercentEncoding ?? raw }

    static func answer(_ body: JSON, status: HTTPResponse.Status = .ok) -> Response {
        JSONBody.response(status, body, headers: [.cacheControl: "no-store"])
    }
}
