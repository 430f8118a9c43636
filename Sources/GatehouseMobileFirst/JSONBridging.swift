import Foundation
import GatehouseProtocol

/// The dictionaries MobileFirst's iOS SDK hands to and takes from apps (`[AnyHashable: Any]`, as its Objective-C
/// `NSDictionary` imports into Swift), to and from the SDK's ``JSON``: `null` is `NSNull`, whole numbers `Int`,
/// other numbers `Double`, objects `[AnyHashable: Any]` with `String` keys, arrays `[Any]`.
enum JSONBridging {
    static func any(_ json: JSON) -> Any {
        switch json {
        case .null: NSNull()
        case .bool(let flag): flag
        case .int(let number): Int(exactly: number) ?? Double(number)
        case .double(let number): number
        case .string(let text): text
        case .array(let items): items.map(any)
        case .object(let members): dictionary(members)
        }
    }

    static func dictionary(_ object: JSONObject) -> [AnyHashable: Any] {
        var result: [AnyHashable: Any] = [:]
        for (key, value) in object { result[key] = any(value) }
        return result
    }

    /// `value` as JSON; `nil` for what JSON cannot hold (a date, an object of the app's).
    static func json(_ value: Any?) -> JSON? {
        switch value {
        case nil, is NSNull: return .null
        case let flag as Bool: return .bool(flag)
        case let number as Int: return .int(Int64(number))
        case let number as Int64: return .int(number)
        case let number as Int32: return .int(Int64(number))
        case let number as Double: return number.rounded() == number && abs(number) < 1e15 ? .int(Int64(number)) : .double(number)
        case let number as Float: return .double(Double(number))
        case let text as String: return .string(text)
        case let text as Substring: return .string(String(text))
        case let number as NSNumber: return .double(number.doubleValue)
        case let items as [Any]:
            let converted = items.compactMap(json)
            return converted.count == items.count ? .array(converted) : nil
        case let members as [AnyHashable: Any]: return .object(object(members))
        case let members as [String: Any]: return .object(object(Dictionary(uniqueKeysWithValues: members.map { (AnyHashable($0.key), $0.value) })))
        default: return nil
        }
    }

    /// An answer or credentials as a JSON object: keys as their descriptions, values JSON can hold.
    static func object(_ dictionary: [AnyHashable: Any]?) -> JSONObject {
        var result: JSONObject = [:]
        for (key, value) in dictionary ?? [:] {
            if let json = json(value) { result[String(describing: key.base)] = json }
        }
        return result
    }
}
