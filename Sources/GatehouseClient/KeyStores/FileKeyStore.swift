public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A ``KeyStore`` that keeps the registration (the client's private key among it) as a JSON file.
///
/// The file is readable and writable by its owner only (`0600`), in a directory the store creates owner-only
/// (`0700`); it is replaced atomically. On iOS, tvOS, watchOS and visionOS it has complete data protection
/// (unreadable while the device is locked) and, on every Apple platform, it is excluded from backups (a key pair
/// restored on another device would be a copied identity). The Keychain (`KeychainKeyStore`) is the better
/// home on Apple platforms; this store is the default elsewhere.
public struct FileKeyStore: KeyStore {
    /// The file.
    public let fileURL: URL

    /// A store in `directory` (created owner-only when missing), in the file `<name>.json`.
    public init(directory: URL, name: String = "gatehouse-registration") {
        fileURL = directory.appendingPathComponent("\(name).json")
    }

    /// Reads the file; `nil` when there is none.
    public func load() async throws -> StoredRegistration? {
        guard FileManager.default.fileExists(atPath: fileURL.path) else { return nil }
        return try JSONDecoder().decode(StoredRegistration.self, from: Data(contentsOf: fileURL))
    }

    /// Writes the file atomically: a new file created `0600` (never readable by others, not even for a moment),
    /// then renamed over the old one.
    public func save(_ registration: StoredRegistration) async throws {
        let directory = fileURL.deletingLastPathComponent()
        if !FileManager.default.fileExists(atPath: directory.path) {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(registration)
        let temporary = directory.appendingPathComponent(".\(fileURL.lastPathComponent).\(UUID().uuidString)")
        do {
            try Self.writeOwnerOnly(data, to: temporary.path)
            try Self.protect(temporary)
            // rename(2) replaces the old file atomically (FileManager.replaceItemAt is unreliable on Linux).
            guard rename(temporary.path, fileURL.path) == 0 else { throw Self.posixError(path: fileURL.path) }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
        try Self.excludeFromBackup(fileURL)
    }

    /// Removes the file.
    public func delete() async throws {
        if FileManager.default.fileExists(atPath: fileURL.path) {
            try FileManager.default.removeItem(at: fileURL)
        }
    }

    /// Creates `path` with mode `0600` (failing if it exists) and writes `data` to it.
    private static func writeOwnerOnly(_ data: Data, to path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { throw posixError(path: path) }
        defer { _ = close(descriptor) }
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress!.advanced(by: offset), buffer.count - offset)
                guard written > 0 else { throw posixError(path: path) }
                offset += written
            }
        }
        guard fsync(descriptor) == 0 else { throw posixError(path: path) }
    }

    /// Complete data protection: the file is unreadable while the device is locked. Built on every platform (so that
    /// Linux type-checks what Apple runs), applied where the platform has data protection.
    static var completeProtection: [FileAttributeKey: Any] { [.protectionKey: FileProtectionType.complete] }

    /// Complete data protection where the platform has it.
    private static func protect(_ url: URL) throws {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        try FileManager.default.setAttributes(completeProtection, ofItemAtPath: url.path)
        #endif
    }

    /// Out of backups: built on every platform, applied where the platform backs files up.
    static var excludedFromBackup: URLResourceValues {
        var values = URLResourceValues()
        values.isExcludedFromBackup = true
        return values
    }

    /// Keeps the file out of backups where the platform backs files up.
    private static func excludeFromBackup(_ url: URL) throws {
        #if canImport(Darwin)
        var target = url
        try target.setResourceValues(excludedFromBackup)
        #endif
    }

    private static func posixError(path: String) -> any Error {
        let code = POSIXErrorCode(rawValue: errno) ?? .EIO
        return CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSUnderlyingErrorKey: POSIXError(code)])
    }
}
