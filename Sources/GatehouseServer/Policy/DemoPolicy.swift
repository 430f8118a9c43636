/// The demo policy `gatehouse serve` starts with when no `--policy` is given: the seeds' checks and apps.
///
/// Users: `john` / `demo` and `jane` / `secret`. PIN: `1234`. Console administrator (demo only): `demo-admin` /
/// `demo-admin-secret`.
public enum DemoPolicy {
    /// The origin (``PolicyInForce/Snapshot/origin``) of the demo policy in force.
    public static let origin = "demo policy"

    public static let yaml = """
        # Gatehouse demo policy: the security checks and sample applications of the MobileFirst 8.0 tutorials.
        securityChecks:
          SimpleCaptcha:
            class: SimpleCaptcha
            properties:
              maxOperator: 10
              maxAttempts: 3
              blockedStateExpirationSec: 5
          PinCodeAttempts:
            class: PinCodeAttempts
            properties:
              pinCode: "1234"
              maxAttempts: 3
              blockedStateExpirationSec: 60
              successStateExpirationSec: 60
          UserLogin:
            class: UserLogin
            properties:
              maxAttempts: 3
              blockedStateExpirationSec: 60
              successStateExpirationSec: 3600
              rememberMeDurationSec: 86400
          # A second factor after the login: an authenticator app's code (RFC 6238), enrolled at the first login.
          TOTP:
            class: TOTP
            requires: [UserLogin]
            properties:
              issuer: Gatehouse demo
              maxAttempts: 3
              blockedStateExpirationSec: 60

        applications:
          - { id: com.sample.pincodeswift, platform: ios, scopeElementMapping: { accessRestricted: PinCodeAttempts, transfers: TOTP } }
          - { id: com.sample.pincodeswift, platform: android, scopeElementMapping: { accessRestricted: PinCodeAttempts } }
          - { id: com.sample.simplecaptcha, platform: ios, scopeElementMapping: { accessRestricted: PinCodeAttempts } }
          - { id: com.sample.simplecaptcha, platform: android, scopeElementMapping: { accessRestricted: PinCodeAttempts } }
          - { id: com.sample.web, platform: web, scopeElementMapping: { accessRestricted: PinCodeAttempts, transfers: TOTP } }

        # Demo only: the web console's administrator (/console), secret "demo-admin-secret". A real policy has no
        # default password: define your own confidential client with a hash from `gatehouse hash-password`.
        confidentialClients:
          - { id: demo-admin, displayName: Demo administrator, secretHash: "$2b$10$W.xZxV61Xq4QEsXSpYnbte5.dTX4KAgfcO.MU9cZ7ENdW8ZDBLW6a", allowedScope: "gatehouse.admin gatehouse.admin.read" }

        users:
          - { username: john, displayName: John Doe, passwordHash: "$2b$10$76AvwGKgVW/h00AzoxZvzuD99o1F8N6mS5HjlLgyAdDz5Gn3Cb2uu", attributes: { country: DE } }
          - { username: jane, displayName: Jane Roe, passwordHash: "$2b$10$cp.GD18nLJYUpKhqQUjHDuv.HN1zI1IyIZAt5Ceoh1EC8keY8qaua" }
        """

    /// The demo's published credentials, by their hashes: `demo-admin` / `demo-admin-secret`, `john` / `demo`,
    /// `jane` / `secret`. Whoever has read the README knows them.
    static let publishedHashes: [String: String] = [
        "$2b$10$W.xZxV61Xq4QEsXSpYnbte5.dTX4KAgfcO.MU9cZ7ENdW8ZDBLW6a": "demo-admin-secret",
        "$2b$10$76AvwGKgVW/h00AzoxZvzuD99o1F8N6mS5HjlLgyAdDz5Gn3Cb2uu": "demo",
        "$2b$10$cp.GD18nLJYUpKhqQUjHDuv.HN1zI1IyIZAt5Ceoh1EC8keY8qaua": "secret",
    ]

    /// The accounts of `policy` whose secret is one of the demo's published ones (`confidential client demo-admin`,
    /// `user john`): a policy started from `gatehouse demo-policy` that kept them.
    static func publishedCredentials(in policy: SecurityPolicy) -> [String] {
        policy.confidentialClients.filter { $0.secretHash.map { publishedHashes[$0] != nil } ?? false }.map { "confidential client \($0.id)" }
            + policy.users.filter { publishedHashes[$0.passwordHash] != nil }.map { "user \($0.username)" }
    }
}
