import Foundation
import GatehouseChecks
import GatehouseProtocol
@testable import GatehouseServer
import GatehouseStore
import Testing

/// JSON written by hand (the token's claims, the token answer) reads back as the `Codable` form, whatever the
/// strings hold; the hot path's content-type check reads media types as the RFC says.
@Suite(.timeLimit(.minutes(3))) struct JSONTextTests {
    static let awkward = ["plain", "quote \" backslash \\ slash /", "new\nline\ttab\rreturn", "\u{0}\u{1}\u{1F}\u{7F}\u{8}\u{C}",
                          "é 日本 🔐 \u{2028}", "", "{\"json\":[1,2]}"]

    /// What Foundation's sorted encoder writes for `value`: the answers' bytes before they were written by hand.
    static func foundation(_ value: some Encodable) throws -> [UInt8] { [UInt8](try SharedJSONCoders.sortedEncoder.encode(value)) }

    /// A JSON value with every kind of member, named and filled with `text`.
    static func everything(_ text: String) -> JSON {
        .object([
            text: .string(text), "b": .bool(true), "B": .bool(false), "_": .null, "int": .int(Int64.min), "big": .int(Int64.max),
            "doubles": .array([.double(1.0), .double(1.5), .double(0.1), .double(1e21), .double(1e-7), .double(-0.0), .double(1e300)]),
            "nested": .object(["é": .array([]), "z": .object([:]), "a": .array([.string(text), .object([text: .int(-1)])])]),
        ])
    }

    /// The answers written by hand are byte for byte what `JSONEncoder` wrote before (so clients and tests that
    /// compare bodies see no change), whatever the strings hold.
    @Test(.timeLimit(.minutes(3)), arguments: awkward) func answersAreTheSameBytesAsJSONEncoders(text: String) throws {
        let value = Self.everything(text)
        #expect(value.jsonText == (try Self.foundation(value)))
        let strings = [text: text, "clientId": "c-\(text)"]
        #expect(strings.jsonText == (try Self.foundation(strings)))
        #expect([String: String]().jsonText == Array("{}".utf8))
        for round in [PreauthorizeResponse(successes: [text: value, "clockSynchronization": ["serverTimeStamp": 1_795_581_718_000]]),
                      PreauthorizeResponse(successes: [:], challenges: [text: value]), PreauthorizeResponse(failures: [text: .null]),
                      PreauthorizeResponse()] {
            #expect(round.jsonText == (try Self.foundation(round)))
        }
        let introspection = TokenIntrospection(
            active: true, scope: text, clientID: text, exp: 1_795_581_718_000, iat: 1_795_581_700_000, sub: text, iss: "https://a/\(text)",
            jti: text, tokenType: "Bearer", username: text, application: ["id": .string(text), "version": .null], device: value,
            user: nil, checks: [text: .object([:]), "PinCodeAttempts": .object([:])])
        #expect(introspection.jsonText == (try Self.foundation(introspection)))
        let bare = TokenIntrospection(active: true, scope: "s", clientID: "c", exp: nil, iat: nil, sub: nil, iss: nil, jti: nil, tokenType: nil,
                                      username: nil, application: nil, device: nil, user: nil, checks: nil)
        #expect(bare.jsonText == (try Self.foundation(bare)))
        #expect(TokenIntrospection.inactive.jsonText == (try Self.foundation(TokenIntrospection.inactive)))
        let token = TokenResponse(accessToken: "eyJ.\(text).sig", expiresIn: 3599, scope: text)
        #expect(token.jsonText == (try Self.foundation(token)))
        for error in [ErrorResponse(errorCode: text, errorMsg: "m \(text)")] {
            #expect(error.jsonText == (try Self.foundation(error)))
        }
        for error in [OAuthErrorResponse(error: text, errorDescription: text), OAuthErrorResponse(error: "invalid_request", errorDescription: nil)] {
            #expect(error.jsonText == (try Self.foundation(error)))
        }
    }

    /// ``everything(_:)`` without the numbers JSON cannot tell from integers (`1.0` reads back as the integer `1`, with
    /// any encoder).
    static func storable(_ text: String) -> JSON {
        guard case .object(var members) = everything(text) else { return .null }
        members["doubles"] = .array([.double(1.5), .double(0.1), .double(1e-7), .double(-2.5e300)])
        return .object(members)
    }

    /// The records a flow stores, written by hand, read back with the stores' decoder as they were.
    @Test(.timeLimit(.minutes(3)), arguments: awkward) func storedRecordsReadBackAsTheyWere(text: String) throws {
        let registration = ClientRegistrationRecord(
            clientID: text, data: RegistrationData(device: DeviceData(id: text, hardware: text.isEmpty ? nil : text, platform: "ios", deviceDisplayName: nil),
                                                   application: ApplicationData(id: text, clientPlatform: "web", version: nil),
                                                   attributes: [text: Self.storable(text), "b": .null]),
            publicKey: RSAPublicJWK(n: "AQAB/\(text)", e: "AQAB", kid: text), createdAt: Int64.min, updatedAt: Int64.max)
        let bare = ClientRegistrationRecord(clientID: "c", data: RegistrationData(device: DeviceData(id: "d"), application: ApplicationData(id: "a", clientPlatform: "ios", version: "1")),
                                            publicKey: RSAPublicJWK(n: "n", e: "e"), createdAt: 0, updatedAt: 1)
        for record in [registration, bare] {
            #expect(try StoreCoding.shared.decode(ClientRegistrationRecord.self, StoreCoding.shared.encode(record)) == record)
        }
        let code = AuthorizationCodeRecord(codeHash: text, clientID: text, scope: text, redirectURI: "https://a/\(text)", expiresAt: 1, tokenExpiresAt: -1,
                                           checks: [text, "x"], userID: text.isEmpty ? nil : text)
        #expect(try StoreCoding.shared.decode(AuthorizationCodeRecord.self, StoreCoding.shared.encode(code)) == code)
        for event in [AuditEvent(id: 7, time: 1_795_581_718_000, event: text, clientID: text, application: text, user: text, check: text, address: "::1",
                                 node: text, actor: text, detail: text),
                      AuditEvent(time: 0, event: "registration")] {
            #expect(try StoreCoding.shared.decode(AuditEvent.self, StoreCoding.shared.encode(event)) == event)
        }
        let user = AuthenticatedUser(id: text, displayName: text, authenticatedAt: 5, authenticatedBy: "UserLogin", attributes: [text: text, "a": "b"])
        for context in [ClientSnapshot.StoredContext(), ClientSnapshot.StoredContext(
            registration: RegistrationContext(registeredUser: user, publicAttributes: [text: .string(text)], protectedAttributes: ["x": Self.storable(text)]),
            activeUser: user, lastActivity: 1_795_581_718_000)] {
            #expect(try JSONDecoder().decode(ClientSnapshot.StoredContext.self, from: Data(context.jsonText)) == context)
        }
    }

    /// `T` read by hand (``JSONValueDecodable``) takes exactly what `JSONDecoder` takes, and reads it alike: the
    /// object of `members`, each member missing in turn, each of every other type, `null`, and with an extra member.
    /// Returns how many of them were read by hand (the rest fell to `JSONDecoder`, which `SharedJSONCoders` then uses).
    static func readByHandAsJSONDecoderReads<T: JSONValueDecodable & Equatable>(_ type: T.Type, members: [String]) throws -> Int {
        var texts = ["{" + members.joined(separator: ",") + "}", "[]", "null", "{}"]
        for index in members.indices {
            var without = members
            without.remove(at: index)
            texts.append("{" + without.joined(separator: ",") + "}")   // each member missing in turn
            let key = members[index].split(separator: ":", maxSplits: 1)[0]
            for value in ["null", "1", "1.5", #""x""#, "[]", "[1]", #"["a",null]"#, "{}", "true", "9223372036854775808"] {
                var changed = members
                changed[index] = key + ":" + value
                texts.append("{" + changed.joined(separator: ",") + "}")   // each member of every other type
            }
        }
        texts.append("{" + members.joined(separator: ",") + #","extra":{"x":[1,2]}}"#)
        var readByHand = 0
        for text in texts {
            let expected = try? JSONDecoder().decode(T.self, from: Data(text.utf8))
            let byHand = JSONReader.read(Array(text.utf8)).flatMap { T(json: $0) }
            if let byHand {
                readByHand += 1
                #expect(byHand == expected, "\(T.self): \(text)")
            } else if expected != nil {
                // Left to JSONDecoder (a number written as 1.0, say): the shared decoding still reads it.
                #expect(try SharedJSONCoders.decode(T.self, from: Array(text.utf8)) == expected, "\(T.self): \(text)")
            }
        }
        return readByHand
    }

    /// An authorization code read by hand takes exactly what `JSONDecoder` takes, and reads it alike.
    @Test(.timeLimit(.minutes(3))) func codesReadByHandAsJSONDecoderReadsThem() throws {
        let members = [#""codeHash":"h""#, #""clientID":"c""#, #""scope":"s""#, #""redirectURI":"https://a/""#, #""expiresAt":5"#,
                       #""tokenExpiresAt":-7"#, #""checks":["a","b"]"#, #""userID":"u""#]
        #expect(try Self.readByHandAsJSONDecoderReads(AuthorizationCodeRecord.self, members: members) >= 4, "the hand reading is exercised")
        let text = "{" + members.joined(separator: ",") + "}"
        #expect(try StoreCoding.shared.decode(AuthorizationCodeRecord.self, text) == JSONDecoder().decode(AuthorizationCodeRecord.self, from: Data(text.utf8)))
    }

    /// The stored check states and client context a round reads are read by hand exactly as `JSONDecoder` reads
    /// them, member by member, nested ones included.
    @Test(.timeLimit(.minutes(3))) func statesReadByHandAsJSONDecoderReadsThem() throws {
        let machine = #""machine":{"stateName":"success","stateSetAt":1795581718000}"#
        let user = #""id":"john","displayName":"John","authenticatedAt":5,"authenticatedBy":"UserLogin","attributes":{"a":"b"}"#
        let cases: [(String, () throws -> Int)] = [
            ("machine", { try Self.readByHandAsJSONDecoderReads(ExternalizableState.self, members: [#""stateName":"attempting""#, #""stateSetAt":-3"#]) }),
            ("captcha", { try Self.readByHandAsJSONDecoderReads(CredentialsValidationState<SimpleCaptcha.CheckData>.self, members: [
                #""data":{"errorMsg":"no","expectedResult":7}"#, machine, #""usedAttempts":2"#]) }),
            ("captcha data", { try Self.readByHandAsJSONDecoderReads(SimpleCaptcha.CheckData.self, members: [#""errorMsg":"no""#, #""expectedResult":7"#]) }),
            ("pin", { try Self.readByHandAsJSONDecoderReads(CredentialsValidationState<PinCodeAttempts.CheckData>.self, members: [
                #""data":{"errorMsg":"no"}"#, machine, #""usedAttempts":0"#]) }),
            ("login data", { try Self.readByHandAsJSONDecoderReads(UserLogin.CheckData.self, members: [#""errorMsg":"no""#, #""userID":"john""#]) }),
            ("no data", { try Self.readByHandAsJSONDecoderReads(CredentialsValidationState<NoCheckData>.self, members: [
                #""data":{}"#, machine, #""usedAttempts":1"#]) }),
            ("user", { try Self.readByHandAsJSONDecoderReads(AuthenticatedUser.self, members: user.split(separator: ",", maxSplits: 4).map(String.init)) }),
            ("registration", { try Self.readByHandAsJSONDecoderReads(RegistrationContext.self, members: [
                #""registeredUser":{"# + user + "}", #""publicAttributes":{"rememberedAt":1,"x":[null,{"y":true}]}"#, #""protectedAttributes":{}"#]) }),
            ("context", { try Self.readByHandAsJSONDecoderReads(ClientSnapshot.StoredContext.self, members: [
                #""activeUser":{"# + user + "}", #""lastActivity":1795581718000"#, #""registration":{"publicAttributes":{},"protectedAttributes":{}}"#]) }),
        ]
        for (name, check) in cases {
            #expect(try check() >= 4, "\(name): the hand reading is exercised")
        }
    }

    /// The built-in checks' states are written by hand byte for byte as the sorted `JSONEncoder` wrote them (so a
    /// state read back and written unchanged is not a change), whatever the strings hold, and read back as they were.
    @Test(.timeLimit(.minutes(3)), arguments: awkward) func statesAreTheSortedEncodersBytes(text: String) throws {
        var captcha = CredentialsValidationState<SimpleCaptcha.CheckData>()
        #expect(captcha.jsonText == (try Self.foundation(captcha)))
        captcha.data.errorMsg = text
        captcha.data.expectedResult = -12
        captcha.usedAttempts = 2
        captcha.setState(CredentialsValidationState<SimpleCaptcha.CheckData>.success, CredentialsValidationConfiguration(), now: 1_795_581_718_000)
        captcha.usedAttempts = 2
        #expect(captcha.jsonText == (try Self.foundation(captcha)))
        #expect(try SharedJSONCoders.decode(CredentialsValidationState<SimpleCaptcha.CheckData>.self, from: captcha.jsonText) == captcha)
        var pin = CredentialsValidationState<PinCodeAttempts.CheckData>()
        pin.data.errorMsg = text
        #expect(pin.jsonText == (try Self.foundation(pin)))
        var login = CredentialsValidationState<UserLogin.CheckData>()
        #expect(login.jsonText == (try Self.foundation(login)))
        login.data.userID = text
        login.data.errorMsg = text
        #expect(login.jsonText == (try Self.foundation(login)))
        #expect(try SharedJSONCoders.decode(CredentialsValidationState<UserLogin.CheckData>.self, from: login.jsonText) == login)
        let none = CredentialsValidationState<NoCheckData>()
        #expect(none.jsonText == (try Self.foundation(none)))
        let user = AuthenticatedUser(id: text, displayName: text, authenticatedAt: 5, authenticatedBy: "UserLogin", attributes: [text: text, "a": "b"])
        let context = ClientSnapshot.StoredContext(registration: RegistrationContext(registeredUser: user, publicAttributes: [text: Self.storable(text)]),
                                                   activeUser: user, lastActivity: -1)
        #expect(try SharedJSONCoders.decode(ClientSnapshot.StoredContext.self, from: context.jsonText) == context)
    }

    @Test(.timeLimit(.minutes(3))) func numbersJSONCannotHoldAreNull() {
        #expect(JSON.array([.double(.infinity), .double(.nan)]).jsonText == Array("[null,null]".utf8))
    }

    @Test(.timeLimit(.minutes(3)), arguments: awkward) func claimsReadBackAsTheyWere(text: String) throws {
        let claims = AccessTokenClaims(
            iss: "https://auth.example/\(text)", sub: text, exp: 1_795_581_718, iat: -1, iat_ms: Int64.max, jti: text, scope: "a \(text)",
            client_id: text, app: ApplicationData(id: text, clientPlatform: "ios", version: text.isEmpty ? nil : text),
            checks: [text, "PinCodeAttempts"], user: text.isEmpty ? nil : text, cnf: text.isEmpty ? nil : .init(x5tS256: text))
        let written = claims.jsonText
        #expect(try JSONDecoder().decode(AccessTokenClaims.self, from: Data(written)) == claims)
        #expect(try JSONSerialization.jsonObject(with: Data(written)) is [String: Any], "strict JSON")
        let bare = AccessTokenClaims(iss: "i", sub: "s", exp: 1, iat: 1, iat_ms: 1, jti: "j", scope: "", client_id: "c", app: nil, checks: [], user: nil)
        #expect(try JSONDecoder().decode(AccessTokenClaims.self, from: Data(bare.jsonText)) == bare)
        #expect(!String(decoding: bare.jsonText, as: UTF8.self).contains("null"), "absent optionals are left out, as Codable does")
    }

    @Test(.timeLimit(.minutes(3)), arguments: awkward) func tokenAnswersReadBackAsTheyWere(text: String) throws {
        let answer = TokenResponse(accessToken: "eyJ.\(text).sig", expiresIn: 3599, scope: text)
        #expect(try JSONDecoder().decode(TokenResponse.self, from: Data(JSONBody.buffer(answer).readableBytesView)) == answer)
    }

    @Test(.timeLimit(.minutes(3))) func mediaTypesAreReadCaseInsensitivelyWithoutParameters() {
        let form = "application/x-www-form-urlencoded"
        for good in [form, "Application/X-WWW-Form-URLEncoded", "  \(form)  ", "\(form); charset=UTF-8", "\(form)\t;x=y"] {
            #expect(RequestReading.mediaType(of: good, is: form), "\(good)")
        }
        for bad in ["", ";", "application/json", "\(form)x", "x\(form)", "application/x-www-form-urlencode", "\(form) x"] {
            #expect(!RequestReading.mediaType(of: bad, is: form), "\(bad)")
        }
    }
}
