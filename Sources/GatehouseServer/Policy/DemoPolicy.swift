/// The demo policy `gatehouse serve` starts with when no `--policy` is given: the seeds' checks and apps.
///
/// Users: `john` / `demo` and `jane` / `secret`. PIN: `1234`. Console administrator (demo only): `demo-admin` /
/// `demo-admin-secret`.
public enum DemoPolicy {
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

        applications:
          - { id: com.sample.pincodeswift, platform: ios, scopeElementMapping: { accessRestricted: PinCodeAttempts } }
          - { id: com.sample.pincodeswift, platform: android, scopeElementMapping: { accessRestricted: PinCodeAttempts } }
          - { id: com.sample.simplecaptcha, platform: ios, scopeElementMapping: { accessRestricted: PinCodeAttempts } }
          - { id: com.sample.simplecaptcha, platform: android, scopeElementMapping: { accessRestricted: PinCodeAttempts } }
          - { id: com.sample.web, platform: web, scopeElementMapping: { accessRestricted: PinCodeAttempts } }

        # Demo only: the web console's administrator (/console), secret "demo-admin-secret". A real policy has no
        # default password: define your own confidential client with a hash from `gatehouse hash-password`.
        confidentialClients:
          - { id: demo-admin, displayName: Demo administrator, secretHash: "$2b$10$W.xZxV61Xq4QEsXSpYnbte5.dTX4KAgfcO.MU9cZ7ENdW8ZDBLW6a", allowedScope: "gatehouse.admin gatehouse.admin.read" }

        users:
          - { username: john, displayName: John Doe, passwordHash: "$2b$10$76AvwGKgVW/h00AzoxZvzuD99o1F8N6mS5HjlLgyAdDz5Gn3Cb2uu", attributes: { country: DE } }
          - { username: jane, displayName: Jane Roe, passwordHash: "$2b$10$cp.GD18nLJYUpKhqQUjHDuv.HN1zI1IyIZAt5Ceoh1EC8keY8qaua" }
        """
}
