import ArgumentParser
import Foundation
import GatehouseChecks
import GatehouseServer
import GatehouseStore

/// `gatehouse import-mfp`: a MobileFirst 8.0 project's security configuration written as a Gatehouse policy
/// (``MobileFirstImport``), with the report of what was carried, changed, left out and is left to do.
struct ImportMobileFirstCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import-mfp",
        abstract: "Write a Gatehouse policy from a MobileFirst 8.0 project's adapter descriptors, application descriptors and confidential clients.",
        discussion: """
            Give files or folders: adapter.xml files (security check definitions), application descriptors (JSON with \
            applicationKey, as mfpdev app pull writes them), adapter configurations (JSON with securityCheckDefinitions, \
            as mfpdev adapter pull writes them) and confidential clients (JSON: {"clients": [...]}); \
            folders are searched for them. The report goes to standard error, and into the policy as comments; \
            the policy is then loaded as gatehouse serve would load it, and what stops it is said.
            """)

    @Argument(help: "adapter.xml files, application descriptor and confidential client JSON files, or folders holding them.")
    var paths: [String]

    @Option(help: "Write the policy here (default: standard output).")
    var out: String?

    @Option(name: .customLong("map"), help: ArgumentHelp("Map a MobileFirst check class to a Gatehouse one: com.acme.OtpCheck=PinCodeAttempts (repeatable).", valueName: "class=class"))
    var maps: [String] = []

    @Option(help: "The bcrypt cost of confidential clients' secrets.")
    var cost: Int = 12

    func run() async throws {
        var classMap: [String: String] = [:]
        for map in maps {
            let parts = map.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { throw ValidationError("--map takes class=class, not \(map)") }
            classMap[parts[0]] = parts[1]
        }
        guard (4...Int(PasswordVerifier.maximumCost)).contains(cost) else { throw ValidationError("--cost must be between 4 and \(PasswordVerifier.maximumCost)") }
        var importer = MobileFirstImport(classMap: classMap, cost: cost)
        var read = 0
        // Adapter configurations go over the descriptors' defaults: applied once every descriptor is read.
        var configurations: [(Data, String)] = []
        for file in try Self.files(in: paths) {
            guard let data = FileManager.default.contents(atPath: file) else { throw CommandFailure("Cannot read \(file).") }
            do {
                if file.lowercased().hasSuffix(".xml") {
                    try importer.addAdapterDescriptor(data, file: file)
                } else if let kind = Self.kind(of: data) {
                    switch kind {
                    case .application: try importer.addApplicationDescriptor(data, file: file)
                    case .clients: try importer.addConfidentialClients(data, file: file)
                    case .adapterConfiguration: configurations.append((data, file))
                    }
                } else {
                    FileHandle.standardError.write(Data("skipped \(file): neither an application descriptor nor confidential clients\n".utf8))
                    continue
                }
            } catch let failure as MobileFirstImport.Failure {
                throw CommandFailure(failure.description)
            }
            read += 1
        }
        do {
            for (data, file) in configurations { try importer.addAdapterConfiguration(data, file: file) }
        } catch let failure as MobileFirstImport.Failure {
            throw CommandFailure(failure.description)
        }
        guard read > 0 else { throw CommandFailure("No adapter descriptor, application descriptor or confidential clients found in \(paths.joined(separator: ", ")).") }
        let yaml = try importer.yaml()
        for note in importer.notes { FileHandle.standardError.write(Data("\(note)\n".utf8)) }
        if let out {
            guard !FileManager.default.fileExists(atPath: out) else { throw CommandFailure("\(out) exists: choose another file.") }
            guard FileManager.default.createFile(atPath: out, contents: Data(yaml.utf8), attributes: [.posixPermissions: 0o600]) else {
                throw CommandFailure("Cannot write \(out).")
            }
        } else {
            print(yaml, terminator: "")
        }
        // Loaded as a start would load it (users aside, which only the running server reads).
        do {
            _ = try SecurityPolicy.parse(yaml: yaml, file: out ?? "the imported policy", registry: .builtIn, services: SecurityCheckServices(users: NoUsers()))
            FileHandle.standardError.write(Data("The policy loads.\n".utf8))
        } catch {
            FileHandle.standardError.write(Data("The policy does not load yet: \(error)\n".utf8))
        }
    }

    private struct NoUsers: UserDirectory {
        func user(named username: String) async throws -> UserRecord? { nil }
    }

    enum Kind { case application, clients, adapterConfiguration }

    /// What a JSON file holds, by its members.
    static func kind(of data: Data) -> Kind? {
        guard let object = try? JSONSerialization.jsonObject(with: data) else { return nil }
        if let dictionary = object as? [String: Any] {
            if dictionary.keys.contains(where: { $0.lowercased() == "applicationkey" }) { return .application }
            if dictionary["clients"] != nil { return .clients }
            if dictionary["securityCheckDefinitions"] != nil { return .adapterConfiguration }
        }
        if let array = object as? [[String: Any]], array.first?["allowedScope"] != nil { return .clients }
        return nil
    }

    /// The files named, and in the folders named the `.xml` and `.json` files below them (sorted, so the report's
    /// order does not depend on the file system).
    static func files(in paths: [String]) throws -> [String] {
        var files: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { throw CommandFailure("No such file or folder: \(path)") }
            guard isDirectory.boolValue else {
                files.append(path)
                continue
            }
            let found = (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? [])
                .filter { name in
                    let lower = name.lowercased()
                    return (lower.hasSuffix("adapter.xml") || lower.hasSuffix(".json")) && !lower.contains("node_modules") && !lower.contains("/target/")
                }
                .sorted()
            files += found.map { (path as NSString).appendingPathComponent($0) }
        }
        return files
    }
}
