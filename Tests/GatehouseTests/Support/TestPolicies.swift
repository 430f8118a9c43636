/// Policies the tests run with.
enum TestPolicies {
    static let standard = """
        registrationThrottle: { perAddress: 0 }
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
          - id: com.sample.tiny
            platform: ios
            maxTokenExpiration: 2
            scopeElementMapping: { accessRestricted: PinCodeAttempts }
          - id: com.sample.brief
            platform: ios
            maxTokenExpiration: 8
            scopeElementMapping: { accessRestricted: PinCodeAttempts }
        confidentialClients:
          - { id: balance-service, secretHash: "$2b$04$axi4I88RAaRiFuao0JVORezeW1NmWqrlkcjbmbaiCdWPCDsWSH.J2", allowedScope: "authorization.introspect" }
          - { id: reporter, secretHash: "$2b$04$D.nE/o5m0hVipa6x0PFC/uQtnvEfXFvsrGsmvfNrWNxDTxhPO4Rw2", allowedScope: "reports.* accessRestricted" }
        users:
          - { username: john, displayName: John Doe, passwordHash: "$2b$10$76AvwGKgVW/h00AzoxZvzuD99o1F8N6mS5HjlLgyAdDz5Gn3Cb2uu", attributes: { country: DE } }
        """
}
