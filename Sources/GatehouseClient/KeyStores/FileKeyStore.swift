import Foundation

/// A ``KeyStore`` that keeps the registration as a JSON file (readable by its owner only) in a directory.
public struct FileKeyStore: KeyStore {
    /// The file.
    public let fileURL: URL

    /// A store in `directory` (created when missing), in the file `<name>.json`.
    public init(directory: URL, name: String = "gatehouse-registration") {
        fileURL = directory.appendingPathComponent("\(name).json")
    }

    /// Reads the file; `nil` when there is none.
    public func load() async throws -> StoredRegistration? {
        guard FileManager.default.fileExists(atPath: fileURL.path) else { return nil }
        return try JSONDecoder().decode(StoredRegistration.self, from: Data(contentsOf: fileURL))
    }

    /// Writes the file atomically, readable by its owner only (`0600`, in a `0700` directory).
    public func save(_ registration: StoredRegistration) async throws {
        let directory = fileURL.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(registration)
        let temporary = directory.appendingPathComponent(".\(fileURL.lastPathComponent).\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary.path])
        }
        // rename(2) replaces the old file atomically (FileManager.replaceItemAt is unreliable on Linux).
        guard rename(temporary.path, fileURL.path) == 0 else {
            let code = errno
            try? FileManager.default.removeItem(at: temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: fileURL.path, NSUnderlyingErrorKey: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)])
        }
    }

    /// Removes the file.
    public func delete() async throws {
        if FileManager.default.fileExists(atPath: fileURL.path) {
            try FileManager.default.removeItem(at: fileURL)
        }
    }
}
