// A stand-in for the part of Apple's Security framework that the SDK's Apple-only adapters call, so that they compile
// and run on Linux (no Apple toolchain exists here). It declares exactly those names, with the signatures and the
// availability of Apple's iOS SDK, and behaves as Apple's documentation says:
// - Keychain items: "SecItemAdd", "SecItemCopyMatching", "SecItemUpdate", "SecItemDelete" and "Item Attribute Keys and
//   Values" (developer.apple.com/documentation/security/keychain_services/keychain_items): an item's primary key
//   for kSecClassGenericPassword is its access group, account and service; adding one that exists is
//   errSecDuplicateItem; copying, updating or deleting when nothing matches is errSecItemNotFound; an item added
//   without kSecAttrAccessGroup goes to the app's first access group (here `StandInKeychain.defaultAccessGroup`).
// - Trust: "SecTrustEvaluateWithError", "SecTrustCopyCertificateChain" (leaf first), "SecCertificateCopyData" (DER),
//   and URLProtectionSpace.serverTrust / URLCredential(trust:) of Foundation's URL loading system.
// The constants keep Apple's raw values ("svce", "acct", ...). CF types are Swift types here (`CFString` is `String`,
// `CFDictionary` is `[String: Any]`), so that the adapters' `as String` and `as CFDictionary` read as they do on Apple.
// On an Apple platform this module is empty: the adapters import the real Security there.
#if !canImport(Security)
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

public typealias OSStatus = Int32
public typealias CFTypeRef = AnyObject
public typealias CFString = String
public typealias CFDictionary = [String: Any]
public typealias CFArray = [Any]
public typealias CFData = Data
public typealias CFError = NSError

public let errSecSuccess: OSStatus = 0
public let errSecParam: OSStatus = -50
public let errSecDuplicateItem: OSStatus = -25299
public let errSecItemNotFound: OSStatus = -25300
public let errSecInteractionNotAllowed: OSStatus = -25308

public let kSecClass: CFString = "class"
public let kSecClassGenericPassword: CFString = "genp"
public let kSecAttrService: CFString = "svce"
public let kSecAttrAccount: CFString = "acct"
public let kSecAttrAccessGroup: CFString = "agrp"
public let kSecAttrAccessible: CFString = "pdmn"
public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
public let kSecAttrAccessibleWhenUnlocked: CFString = "ak"
public let kSecValueData: CFString = "v_Data"
public let kSecReturnData: CFString = "r_Data"
public let kSecMatchLimit: CFString = "m_Limit"
public let kSecMatchLimitOne: CFString = "m_LimitOne"
public let kSecMatchLimitAll: CFString = "m_LimitAll"

/// The stand-in's keychain: what the adapters stored, for tests to read, and a status to fail the next call with.
public enum StandInKeychain {
    /// The access group of items added without one (an app's first keychain access group).
    public static let defaultAccessGroup = "TEAMID.org.gatehouse.app"
    private static let lock = NSLock()
    nonisolated(unsafe) private static var storage: [[String: Any]] = []
    nonisolated(unsafe) private static var failure: OSStatus?

    /// The items, as their attribute dictionaries.
    public static var items: [[String: Any]] { lock.lock(); defer { lock.unlock() }; return storage }
    /// Empties the keychain.
    public static func reset() { lock.lock(); storage = []; failure = nil; lock.unlock() }
    /// The next call fails with `status` (e.g. errSecInteractionNotAllowed: the device is locked).
    public static func failNextCall(with status: OSStatus) { lock.lock(); failure = status; lock.unlock() }

    static func withItems<T>(_ body: (inout [[String: Any]]) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&storage)
    }

    static func takeFailure() -> OSStatus? {
        lock.lock()
        defer { lock.unlock() }
        defer { failure = nil }
        return failure
    }

    /// The attributes of `query` that select items (not the return, match or value keys).
    static func selectors(_ query: CFDictionary) -> [String: String] {
        var selectors: [String: String] = [:]
        for (key, value) in query where ![kSecReturnData, kSecMatchLimit, kSecValueData].contains(key) {
            if let text = value as? String { selectors[key] = text }
        }
        return selectors
    }

    static func matches(_ item: [String: Any], _ selectors: [String: String]) -> Bool {
        selectors.allSatisfy { key, value in (item[key] as? String) == value }
    }
}

@available(iOS 2.0, macOS 10.6, *)
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    if let failure = StandInKeychain.takeFailure() { return failure }
    guard attributes[kSecClass] as? String == kSecClassGenericPassword else { return errSecParam }
    var item = attributes
    if item[kSecAttrAccessGroup] == nil { item[kSecAttrAccessGroup] = StandInKeychain.defaultAccessGroup }
    let primaryKey = [kSecClass, kSecAttrAccessGroup, kSecAttrAccount, kSecAttrService].reduce(into: [String: String]()) { key, name in
        key[name] = item[name] as? String ?? ""
    }
    return StandInKeychain.withItems { items in
        if items.contains(where: { StandInKeychain.matches($0, primaryKey) }) { return errSecDuplicateItem }
        items.append(item)
        return errSecSuccess
    }
}

@available(iOS 2.0, macOS 10.6, *)
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    if let failure = StandInKeychain.takeFailure() { return failure }
    let selectors = StandInKeychain.selectors(query)
    return StandInKeychain.withItems { items in
        guard let item = items.first(where: { StandInKeychain.matches($0, selectors) }) else { return errSecItemNotFound }
        if query[kSecReturnData] as? Bool == true, let data = item[kSecValueData] as? Data {
            result?.pointee = data as AnyObject
        }
        return errSecSuccess
    }
}

@available(iOS 2.0, macOS 10.6, *)
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    if let failure = StandInKeychain.takeFailure() { return failure }
    guard attributesToUpdate[kSecClass] == nil else { return errSecParam }
    let selectors = StandInKeychain.selectors(query)
    return StandInKeychain.withItems { items in
        var updated = false
        for index in items.indices where StandInKeychain.matches(items[index], selectors) {
            items[index].merge(attributesToUpdate) { $1 }
            updated = true
        }
        return updated ? errSecSuccess : errSecItemNotFound
    }
}

@available(iOS 2.0, macOS 10.6, *)
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    if let failure = StandInKeychain.takeFailure() { return failure }
    let selectors = StandInKeychain.selectors(query)
    return StandInKeychain.withItems { items in
        let before = items.count
        items.removeAll { StandInKeychain.matches($0, selectors) }
        return items.count < before ? errSecSuccess : errSecItemNotFound
    }
}

@available(iOS 11.3, macOS 10.3, *)
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString? {
    switch status {
    case errSecSuccess: "No error."
    case errSecParam: "One or more parameters passed to a function were not valid."
    case errSecDuplicateItem: "The specified item already exists in the keychain."
    case errSecItemNotFound: "The specified item could not be found in the keychain."
    case errSecInteractionNotAllowed: "User interaction is not allowed."
    default: nil
    }
}

/// A certificate (DER).
public final class SecCertificate: @unchecked Sendable {
    let der: Data
    /// A stand-in certificate of `der` (on Apple: `SecCertificateCreateWithData`).
    public init(der: Data) { self.der = der }
}

@available(iOS 2.0, macOS 10.6, *)
public func SecCertificateCopyData(_ certificate: SecCertificate) -> CFData { certificate.der }

/// A trust object: a server's chain and whether the system's evaluation accepts it.
public final class SecTrust: @unchecked Sendable {
    let chain: [SecCertificate]
    let evaluation: NSError?
    /// A stand-in trust of `chain` (leaf first) that evaluates as trusted, or fails with `evaluation`.
    public init(chain: [SecCertificate], evaluation: NSError? = nil) {
        self.chain = chain
        self.evaluation = evaluation
    }
}

@available(iOS 12.0, macOS 10.14, *)
public func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?) -> Bool {
    if let failure = trust.evaluation {
        error?.pointee = failure
        return false
    }
    return true
}

@available(iOS 15.0, macOS 12.0, *)
public func SecTrustCopyCertificateChain(_ trust: SecTrust) -> CFArray? { trust.chain }

/// `NSURLAuthenticationMethodServerTrust`: on Linux, Foundation declares it unavailable (no Security framework); this
/// module's own declaration shadows that one for the modules that import it.
public let NSURLAuthenticationMethodServerTrust = "NSURLAuthenticationMethodServerTrust"

/// The trusts of the protection spaces the stand-in made, by host and port.
private let trusts = StandInTrusts()

private final class StandInTrusts: @unchecked Sendable {
    private let lock = NSLock()
    private var byServer: [String: SecTrust] = [:]

    subscript(host: String, port: Int) -> SecTrust? {
        get { lock.lock(); defer { lock.unlock() }; return byServer["\(host):\(port)"] }
        set { lock.lock(); byServer["\(host):\(port)"] = newValue; lock.unlock() }
    }
}

extension URLProtectionSpace {
    /// The server's trust, for a protection space of `NSURLAuthenticationMethodServerTrust`.
    public var serverTrust: SecTrust? {
        authenticationMethod == NSURLAuthenticationMethodServerTrust ? trusts[host, port] : nil
    }

    /// A server-trust protection space carrying `trust` (on Apple, URLSession makes these).
    public static func standInServerTrust(host: String, port: Int, trust: SecTrust) -> URLProtectionSpace {
        trusts[host, port] = trust
        return URLProtectionSpace(host: host, port: port, protocol: NSURLProtectionSpaceHTTPS, realm: nil,
                                  authenticationMethod: NSURLAuthenticationMethodServerTrust)
    }
}

extension URLCredential {
    /// The trust a server-trust challenge is answered with (`SecTrust` already evaluated).
    public convenience init(trust: SecTrust) {
        self.init(user: "", password: "", persistence: .none)
    }
}
#endif
