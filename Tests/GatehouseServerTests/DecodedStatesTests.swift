import Foundation
@testable import GatehouseServer
import Testing

/// States decoded once per distinct stored bytes: what a request sees is what decoding those bytes gives.
@Suite(.timeLimit(.minutes(3))) struct DecodedStatesTests {
    struct Attempts: Codable, Sendable, Equatable { var used: Int }
    struct Other: Codable, Sendable, Equatable { var used: Int; var extra: String? }

    @Test func aValueIsFoundOnlyForTheBytesAndTypeItWasDecodedFrom() throws {
        let states = DecodedStates(capacity: 100)
        let one = Array(#"{"used":1}"#.utf8)
        #expect(try states.decode(Attempts.self, from: one) == Attempts(used: 1))
        #expect(try states.decode(Attempts.self, from: one) == Attempts(used: 1))
        #expect(states.count == 1, "the second read found the first")
        #expect(try states.decode(Attempts.self, from: Array(#"{"used":2}"#.utf8)) == Attempts(used: 2))
        #expect(try states.decode(Other.self, from: one) == Other(used: 1, extra: nil), "another type decodes the same bytes itself")
        #expect(states.count == 3)
        #expect(throws: DecodingError.self) { try states.decode(Attempts.self, from: Array(#"{"used":"x"}"#.utf8)) }
        #expect(states.count == 3, "nothing is remembered of unreadable bytes")
    }

    @Test func reachingTheCapacityForgetsEverything() throws {
        let states = DecodedStates(capacity: 3)
        for used in 0..<3 { _ = try states.decode(Attempts.self, from: Array(#"{"used":\#(used)}"#.utf8)) }
        #expect(states.count == 3)
        #expect(try states.decode(Attempts.self, from: Array(#"{"used":9}"#.utf8)) == Attempts(used: 9))
        #expect(states.count == 1)
    }
}
