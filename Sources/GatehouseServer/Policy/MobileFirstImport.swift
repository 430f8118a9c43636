public import Foundation
import GatehouseChecks
import GatehouseProtocol
import HummingbirdBcrypt
import Yams

/// A MobileFirst 8.0 project's security configuration as a Gatehouse policy (`gatehouse import-mfp`), with a report
/// of what was carried, changed and left out.
///
/// It reads what a project has:
/// - adapter descriptors (`adapter.xml`): each `<securityCheckDefinition name class>` with its
///   `<property name defaultValue [type]>` becomes a check of `securityChecks`, its class the Gatehouse check of the
///   same name (`PinCodeAttempts`, `UserLogin`, `SimpleCaptcha`), else the closest built-in by name (a PIN, a login, a
///   captcha), else a stub of that class name for the team to write in Swift and register;
/// - application descriptors (JSON, as `mfpdev app pull` and the admin REST API have them): `applicationKey`
///   (`bundleId`, `packageName` or `id`; `clientPlatform`), `scopeElementMapping`, `mandatoryScope`,
///   `maxTokenExpiration` and `securityCheckConfigurations` (`{"Check": {"properties": {...}}}`, or its properties
///   directly) become an entry of `applications`;
/// - confidential clients (JSON: `{"clients": [{"id", "displayName", "secret", "allowedScope"}]}` or the array), their
///   secrets hashed with bcrypt, never written out.
///
/// MobileFirst's predefined checks (`appAuthenticity`, `LtpaBasedSSO`) and device SSO (`enableSSO`) have no Gatehouse
/// counterpart: they are left out and reported. MobileFirst has no users; a `UserLogin` check needs `users:` added.
public struct MobileFirstImport: Sendable {
    /// One thing the report tells.
    public struct Note: Sendable, Equatable, CustomStringConvertible {
        public enum Kind: String, Sendable { case carried, changed, leftOut = "left out", todo = "to do" }
        public let kind: Kind
        public let subject: String
        public let text: String
        /// One line, whatever the descriptors held: the report is written as YAML comments above the policy, where a
        /// line break in a class or check name (`&#10;` in an adapter.xml attribute) ended the comment and wrote
        /// policy (issue 54, finding 4); and to the terminal.
        public var description: String { "\(kind.rawValue): \(Self.oneLine(subject)): \(Self.oneLine(text))" }

        /// `text` with every character that could end a line or a comment to a YAML reader (C0 and C1 controls —
        /// `NEL` among them —, the line and paragraph separators YAML 1.1 breaks at) or reorder what a terminal shows
        /// (format characters: bidirectional overrides) written as `\u{…}`, and `\` as `\\` so that the escapes are
        /// unambiguous.
        static func oneLine(_ text: String) -> String {
            var line = ""
            line.reserveCapacity(text.utf8.count)
            for scalar in text.unicodeScalars {
                switch scalar.properties.generalCategory {
                case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned, .privateUse:
                    line += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                default:
                    if scalar == "\\" { line += "\\\\" } else { line.unicodeScalars.append(scalar) }
                }
            }
            return line
        }
    }

    /// Why a file could not be read.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// The Gatehouse checks a MobileFirst class maps to, by its simple name first.
    static let builtIns = ["PinCodeAttempts", "UserLogin", "SimpleCaptcha"]
    /// MobileFirst's predefined checks, which Gatehouse does not have.
    static let predefined: Set<String> = ["appAuthenticity", "LtpaBasedSSO"]
    /// Properties that are whole numbers in every MobileFirst check configuration.
    static let integerProperties: Set<String> = [
        "maxAttempts", "attemptingStateExpirationSec", "successStateExpirationSec", "blockedStateExpirationSec",
        "rememberMeDurationSec", "inactivityTimeoutSec", "expirationSec", "maxOperator",
    ]

    public private(set) var policy = PolicyFile()
    public private(set) var notes: [Note] = []
    /// Classes mapped explicitly (`--map com.acme.OtpCheck=PinCodeAttempts`), by full or simple class name.
    let classMap: [String: String]
    /// The bcrypt cost of hashed secrets.
    let cost: Int

    public init(classMap: [String: String] = [:], cost: Int = 12) {
        self.classMap = classMap
        self.cost = cost
    }

    // MARK: Adapter descriptors

    /// Adds the security checks an `adapter.xml` defines.
    public mutating func addAdapterDescriptor(_ data: Data, file: String) throws {
        let definitions = try AdapterDescriptorReader.read(data, file: file)
        if definitions.isEmpty { notes.append(Note(kind: .carried, subject: file, text: "no securityCheckDefinition (a resource adapter)")) }
        for definition in definitions {
            let simple = String(definition.className.split(separator: ".").last ?? Substring(definition.className))
            let target: String
            if let mapped = classMap[definition.className] ?? classMap[simple] {
                target = mapped
                notes.append(Note(kind: .changed, subject: definition.name, text: "class \(definition.className) mapped to \(mapped), as asked"))
            } else if Self.builtIns.contains(simple) {
                target = simple
                notes.append(Note(kind: .carried, subject: definition.name, text: "class \(definition.className) is Gatehouse's \(simple)"))
            } else if let closest = Self.closestBuiltIn(simple) {
                target = closest
                notes.append(Note(kind: .changed, subject: definition.name,
                                  text: "class \(definition.className) has no Gatehouse twin: mapped by its name to the built-in \(closest); check that it behaves as the original (or --map it)"))
            } else {
                target = simple
                notes.append(Note(kind: .todo, subject: definition.name,
                                  text: "class \(definition.className) has no Gatehouse counterpart: write it in Swift and register it as \"\(simple)\" (README: Writing a security check); the policy does not load until then"))
            }
            var properties: [String: JSON] = [:]
            for property in definition.properties {
                properties[property.name] = Self.value(property.defaultValue, name: property.name, type: property.type)
            }
            if policy.securityChecks?[definition.name] != nil {
                notes.append(Note(kind: .changed, subject: definition.name, text: "defined again in \(file): this definition replaces the earlier one"))
            }
            policy.securityChecks = (policy.securityChecks ?? [:]).merging([definition.name: .init(class: target, properties: properties)]) { _, new in new }
            if !properties.isEmpty {
                notes.append(Note(kind: .carried, subject: definition.name,
                                  text: "properties " + properties.keys.sorted().joined(separator: ", ")))
            }
        }
    }

    /// The built-in whose job the class name says: a PIN, a login, a captcha.
    static func closestBuiltIn(_ simpleName: String) -> String? {
        let name = simpleName.lowercased()
        if name.contains("pin") { return "PinCodeAttempts" }
        if name.contains("captcha") { return "SimpleCaptcha" }
        if name.contains("login") || name.contains("userauth") || name.contains("password") { return "UserLogin" }
        return nil
    }

    /// A property value as the policy writes it: a number or a flag where the property is one, else text.
    static func value(_ text: String, name: String, type: String?) -> JSON {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if type == "integer" || (type == nil && integerProperties.contains(name)), let number = Int64(trimmed) { return .int(number) }
        if type == "boolean", let flag = Bool(trimmed.lowercased()) { return .bool(flag) }
        return .string(text)
    }

    /// Applies an adapter's runtime configuration (JSON, as `mfpdev adapter pull` writes it:
    /// `{"securityCheckDefinitions": {"Check": {"properties": {"maxAttempts": "4"}}}}`) over its descriptor's defaults.
    public mutating func addAdapterConfiguration(_ data: Data, file: String) throws {
        guard case .object(let configuration)? = try? JSONDecoder().decode(JSON.self, from: data),
              case .object(let definitions)? = configuration["securityCheckDefinitions"] else {
            throw Failure(description: "\(file): no securityCheckDefinitions object")
        }
        for (name, definition) in definitions.sorted(by: { $0.key < $1.key }) {
            guard var check = policy.securityChecks?[name] else {
                notes.append(Note(kind: .todo, subject: name, text: "configured in \(file), but no adapter descriptor given defines it: add its adapter.xml first"))
                continue
            }
            let properties = definition["properties"]?.objectValue ?? [:]
            var merged = check.properties ?? [:]
            for (property, value) in properties {
                merged[property] = value.stringValue.map { Self.value($0, name: property, type: nil) } ?? value
            }
            check.properties = merged
            policy.securityChecks?[name] = check
            if !properties.isEmpty {
                notes.append(Note(kind: .carried, subject: name, text: "adapter configuration " + properties.keys.sorted().joined(separator: ", ")))
            }
        }
    }

    // MARK: Application descriptors

    /// Adds the application an application descriptor (JSON) describes.
    public mutating func addApplicationDescriptor(_ data: Data, file: String) throws {
        guard case .object(let descriptor)? = try? JSONDecoder().decode(JSON.self, from: data) else {
            throw Failure(description: "\(file) is not a JSON object")
        }
        func member(_ name: String) -> JSON? { descriptor.first { $0.key.lowercased() == name.lowercased() }?.value }
        guard let key = member("applicationKey")?.objectValue,
              let id = (key["bundleId"] ?? key["packageName"] ?? key["id"] ?? key["applicationId"] ?? key["packageIdentity"])?.stringValue,
              let platform = key["clientPlatform"]?.stringValue
        else {
            throw Failure(description: "\(file): no applicationKey with an id (bundleId, packageName or id) and a clientPlatform")
        }
        let subject = "\(id) (\(platform))"
        var application = PolicyFile.Application(id: id, platform: platform)
        if let version = key["version"]?.stringValue {
            notes.append(Note(kind: .changed, subject: subject,
                              text: "version \(version) not pinned: the entry serves every version (add version: or versions: rules to tell them apart)"))
        }
        if case .object(let mapping)? = member("scopeElementMapping") {
            var carried: [String: String] = [:]
            for (element, value) in mapping {
                let checks = (value.stringValue ?? "").split(separator: " ").map(String.init)
                let kept = checks.filter { !Self.predefined.contains($0) }
                if kept.count < checks.count {
                    notes.append(Note(kind: .leftOut, subject: subject,
                                      text: "scope element \(element): \(Set(checks).subtracting(kept).sorted().joined(separator: ", ")) (a MobileFirst predefined check)"))
                }
                carried[element] = kept.joined(separator: " ")
            }
            application.scopeElementMapping = carried
        }
        if let mandatory = member("mandatoryScope")?.stringValue {
            let elements = mandatory.split(separator: " ").map(String.init)
            let kept = elements.filter { !Self.predefined.contains($0) }
            if kept.count < elements.count {
                notes.append(Note(kind: .leftOut, subject: subject,
                                  text: "mandatory scope \(Set(elements).subtracting(kept).sorted().joined(separator: ", ")) (a MobileFirst predefined check: Gatehouse has no application authenticity)"))
            }
            if !kept.isEmpty { application.mandatoryScope = kept.joined(separator: " ") }
        }
        if let expiration = member("maxTokenExpiration") {
            guard let seconds = expiration.intValue.map({ Int($0) }) ?? expiration.stringValue.flatMap({ Int($0) }) else {
                throw Failure(description: "\(file): maxTokenExpiration is not a number of seconds")
            }
            application.maxTokenExpiration = seconds
        }
        if case .object(let configurations)? = member("securityCheckConfigurations") {
            var carried: [String: [String: JSON]] = [:]
            for (check, configuration) in configurations {
                guard !Self.predefined.contains(check) else {
                    notes.append(Note(kind: .leftOut, subject: subject, text: "configuration of \(check) (a MobileFirst predefined check)"))
                    continue
                }
                guard case .object(let object) = configuration else { continue }
                if object["enableSSO"] != nil {
                    notes.append(Note(kind: .leftOut, subject: subject, text: "enableSSO of \(check): Gatehouse keeps a check's state per registration (no device SSO)"))
                }
                let properties = object["properties"]?.objectValue ?? object.filter { $0.key != "enableSSO" }
                var typed: [String: JSON] = [:]
                for (name, value) in properties {
                    typed[name] = value.stringValue.map { Self.value($0, name: name, type: nil) } ?? value
                }
                if !typed.isEmpty { carried[check] = typed }
            }
            if !carried.isEmpty {
                application.securityCheckConfigurations = carried
                notes.append(Note(kind: .carried, subject: subject, text: "configured " + carried.keys.sorted().joined(separator: ", ")))
            }
        }
        policy.applications = (policy.applications ?? []).filter { !($0.id == id && $0.platform == platform) } + [application]
        notes.append(Note(kind: .carried, subject: subject, text: "scope mapping, mandatory scope and token expiration"))
    }

    // MARK: Confidential clients

    /// Adds the confidential clients of a JSON export; secrets are hashed (`cost`), never kept.
    public mutating func addConfidentialClients(_ data: Data, file: String) throws {
        guard let json = try? JSONDecoder().decode(JSON.self, from: data) else { throw Failure(description: "\(file) is not JSON") }
        guard let clients = json["clients"]?.arrayValue ?? json.arrayValue else {
            throw Failure(description: "\(file): expected {\"clients\": [...]} or an array of clients")
        }
        for client in clients {
            guard let id = client["id"]?.stringValue, !id.isEmpty, let scope = client["allowedScope"]?.stringValue else {
                throw Failure(description: "\(file): a client without id or allowedScope")
            }
            if id == "test", scope == "*" {
                notes.append(Note(kind: .leftOut, subject: "confidential client test", text: "MobileFirst's development client (secret test, any scope)"))
                continue
            }
            var entry = PolicyFile.ConfidentialClientEntry(id: id, allowedScope: scope)
            entry.displayName = client["displayName"]?.stringValue
            if let secret = client["secret"]?.stringValue, !secret.isEmpty {
                entry.secretHash = Bcrypt.hash(secret, cost: UInt8(clamping: cost))
                notes.append(Note(kind: .carried, subject: "confidential client \(id)", text: "secret hashed with bcrypt (cost \(cost)); scope \(scope)"))
            } else {
                notes.append(Note(kind: .todo, subject: "confidential client \(id)",
                                  text: "no secret in the export: set secretHash (gatehouse hash-password --new-secret)"))
            }
            policy.confidentialClients = (policy.confidentialClients ?? []).filter { $0.id != id } + [entry]
        }
    }

    // MARK: The result

    /// The policy as YAML, the report first as comments.
    public func yaml() throws -> String {
        var checked = notes
        if policy.securityChecks?.values.contains(where: { $0.class == "UserLogin" }) == true, (policy.users ?? []).isEmpty {
            checked.append(Note(kind: .todo, subject: "users", text: "UserLogin checks the policy's users (MobileFirst's sample took any name equal to its password): add users: with gatehouse hash-password"))
        }
        let defined = Set((policy.securityChecks ?? [:]).keys)
        for application in policy.applications ?? [] {
            let named = Set((application.scopeElementMapping ?? [:]).values.flatMap { $0.split(separator: " ").map(String.init) })
                .union((application.securityCheckConfigurations ?? [:]).keys)
            for missing in named.subtracting(defined).sorted() {
                checked.append(Note(kind: .todo, subject: "\(application.id) (\(application.platform))",
                                    text: "\(missing) is named but no adapter descriptor given defines it: add its adapter.xml"))
            }
        }
        if (policy.applications ?? []).isEmpty {
            checked.append(Note(kind: .todo, subject: "applications", text: "no application descriptor was given: add the applications (mfpdev app pull writes their descriptors)"))
        }
        let header = ["# Imported from MobileFirst 8.0 by gatehouse import-mfp.", "#"] + checked.map { "# \($0)" }
        let body = try YAMLEncoder().encode(policy)
        return header.joined(separator: "\n") + "\n\n" + body + (body.hasSuffix("\n") ? "" : "\n")
    }
}
