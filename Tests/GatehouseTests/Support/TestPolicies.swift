/// Policies the tests run with.
enum TestPolicies {
    static let standard = """
        securityChecks:
          SimpleCaptcha:
            class: SimpleCaptcha
            properties: { maxOperator: 10, maxAttempts: 3 }
          PinCodeAttempts:
            class: PinCodeAttempts
            properties: { pinCode: "1234", maxAttempts: 3, blockedStateExpirationSec: 2, successStateExpirationSec: 60 }
          PinDefaultBlock:
            class: PinCodeAttempts
            properties: { pinCode: "4321", maxAttempts: 3 }
          PinLongBlock:
            class: PinCodeAttempts
            properties: { pinCode: "1234", maxAttempts: 3, blockedStateExpirationSec: 600 }
          UserLogin:
            class: UserLogin
            properties: { maxAttempts: 3, successStateExpirationSec: 1, rememberMeDurationSec: 60 }
        applications:
          - id: com.sample.pincodeswift
            platform: ios
            scopeElementMapping: { accessRestricted: PinCodeAttempts, both: "SimpleCaptcha PinCodeAttempts", open: "" }
          - id: com.sample.short
            platform: android
            maxTokenExpiration: 30
            scopeElementMapping: { accessRestricted: PinCodeAttempts }
          - id: com.sample.web
            platform: web
        users:
          - { username: john, displayName: John Doe, passwordHash: "$2b$10$76AvwGKgVW/h00AzoxZvzuD99o1F8N6mS5HjlLgyAdDz5Gn3Cb2uu", attributes: { country: DE } }
        """
}
