import GatehouseProtocol
import GatehouseStore

/// The admin API's query parameters as the service's typed requests: pages, filters and windows; malformed ones
/// refused (``AdminError/invalidRequest(_:)``) before the service is called.
extension AdminRoutes {
    /// `limit`: the size of a page, 1…``AdminService/maxPage`` (100 when absent).
    static func limit(_ query: [String: String]) throws(AdminError) -> Int {
        guard let text = query["limit"] else { return 100 }
        guard let value = Int(text), (1...AdminService.maxPage).contains(value) else {
            throw .invalidRequest("limit must be a whole number from 1 to \(AdminService.maxPage).")
        }
        return value
    }

    /// A page of registrations filtered by `application`, `device`, `user` (and `displayName` for devices), after
    /// the client id `after`.
    static func registrationQuery(_ query: [String: String], byDisplayName: Bool = false) throws(AdminError) -> RegistrationQuery {
        func nonEmpty(_ name: String) -> String? { query[name].flatMap { $0.isEmpty ? nil : $0 } }
        return RegistrationQuery(applicationID: nonEmpty("application"), deviceID: nonEmpty("device"),
                                 deviceDisplayName: byDisplayName ? nonEmpty("displayName") : nil, userID: nonEmpty("user"),
                                 after: nonEmpty("after"), limit: try limit(query))
    }

    /// `after`: the audit event id a page starts after (0 when absent).
    static func auditAfter(_ query: [String: String]) throws(AdminError) -> Int64 {
        guard let text = query["after"] else { return 0 }
        guard let value = Int64(text), value >= 0 else { throw .invalidRequest("after must be an event id (a whole number).") }
        return value
    }

    /// A whole-number query parameter in `range` (`fallback` when absent or empty).
    static func wholeNumber(_ query: [String: String], _ name: String, default fallback: Int64, in range: ClosedRange<Int64>) throws(AdminError)
        -> Int64
    {
        guard let text = query[name], !text.isEmpty else { return fallback }
        guard let value = Int64(text), range.contains(value) else {
            throw .invalidRequest("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound).")
        }
        return value
    }
}
