import Foundation

/// A user name and password given by a ``LoginHandler``.
public struct PasswordCredentials: Sendable, Equatable {
    public var username: String
    public var password: String
    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }
}

/// Asks the user for a user name and password (a login pop-up, a terminal prompt); `nil` = cancel.
public protocol LoginHandler: Sendable {
    func credentials(for request: ChallengeRequest) async -> PasswordCredentials?
}

/// A ``LoginHandler`` made of a closure.
public struct ClosureLoginHandler: LoginHandler {
    let body: @Sendable (ChallengeRequest) async -> PasswordCredentials?
    public init(_ body: @escaping @Sendable (ChallengeRequest) async -> PasswordCredentials?) { self.body = body }
    public func credentials(for request: ChallengeRequest) async -> PasswordCredentials? { await body(request) }
}
