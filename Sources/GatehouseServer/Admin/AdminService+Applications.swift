import Foundation
import GatehouseChecks
import GatehouseProtocol
import Yams

/// Application management for operators (`/admin/v1/applications`): each application of the policy with its version
/// rules and the versions its registrations have (counted, each with the status in force for it); a version rule list
/// replaced live — written into the policy, which is applied as `PUT /admin/v1/policy` applies it (checked, stored as
/// the next version, on every node within the poll interval, audited).
extension AdminService {
    /// The most application versions counted.
    static let versionsListed = 1000

    /// `GET /admin/v1/applications`.
    func applications() async throws -> JSON {
        let seen = try await service.store.applicationVersions(limit: Self.versionsListed)
        return ["applications": .array(service.policy.applications.map { app in
            let versions = seen.filter {
                $0.application == app.id && $0.platform.lowercased() == app.platform.lowercased() && (app.version == nil || app.version == $0.version)
            }
            return [
                "id": .string(app.id), "platform": .string(app.platform), "version": JSON(app.version),
                "versions": Self.versionRules(of: app),
                "seen": .array(versions.map { counted in
                    let rule = app.remoteDisable?.rule(for: counted.version)
                    return ["version": JSON(counted.version), "registrations": .int(Int64(counted.registrations)),
                            "status": .string((rule?.status ?? .active).rawValue)]
                }),
            ]
        })]
    }

    /// An application's version rules as the admin API shows them.
    static func versionRules(of app: ApplicationPolicy) -> JSON {
        .array((app.remoteDisable?.rules ?? []).map { rule in
            var entry: JSONObject = ["versions": .string(rule.versions.description), "status": .string(rule.status.rawValue)]
            if rule.status != .active {
                entry["message"] = .string(rule.message)
                entry["messageId"] = .string(rule.messageID)
            }
            if !rule.messages.isEmpty { entry["messages"] = .object(rule.messages.mapValues { .string($0) }) }
            if let link = rule.downloadLink { entry["downloadLink"] = .string(link) }
            return .object(entry)
        })
    }

    /// `PUT /admin/v1/applications/{id}/{platform}/versions` with `{"versions":[{versions,status,message,messages,
    /// downloadLink}]}`: the application's rules replaced in the policy in force, which is then applied (the YAML is
    /// written anew: its comments are not kept).
    func setVersions(application id: String, platform: String, body: JSON, actor: String, address: String?) async throws -> JSON {
        guard case .array(let rules)? = body["versions"] else {
            throw AdminError.invalidRequest("The body must be {\"versions\": [{\"versions\", \"status\", \"message\", \"messages\", \"downloadLink\"}]}.")
        }
        var document: Node
        do {
            guard let composed = try Yams.compose(yaml: service.policies.current.source) else { throw YamlError.dataCouldNotBeDecoded(encoding: .utf8) }
            document = composed
        } catch {
            throw AdminError.conflict("The policy in force cannot be edited here (\(error)); apply a whole policy with PUT /admin/v1/policy.")
        }
        guard case .sequence(var applications)? = document["applications"],
              let index = applications.firstIndex(where: { $0["id"]?.string == id && $0["platform"]?.string?.lowercased() == platform.lowercased() })
        else {
            throw AdminError.notFound("The policy has no application \(id.prefix(128)) for platform \(platform.prefix(32)).")
        }
        var entry = applications[index]
        entry["versions"] = .sequence(.init(try rules.map(Self.node)))
        applications[index] = entry
        document["applications"] = .sequence(applications)
        return try await applyPolicy(yaml: try Yams.serialize(node: document), actor: actor, address: address)
    }

    /// A JSON value as YAML: strings double-quoted (a version such as `2.0` stays text), objects and arrays as
    /// mappings and sequences. Anything else is refused: the rules hold text only.
    static func node(_ value: JSON) throws -> Node {
        switch value {
        case .string(let text):
            return Node(text, Tag(.str), .doubleQuoted)
        case .object(let members):
            return .mapping(.init(try members.sorted { $0.key < $1.key }.map { (Node($0.key), try node($0.value)) }))
        case .array(let items):
            return .sequence(.init(try items.map(node)))
        default:
            throw AdminError.invalidRequest("Version rules hold text only (versions, status, message, messages, downloadLink).")
        }
    }
}
