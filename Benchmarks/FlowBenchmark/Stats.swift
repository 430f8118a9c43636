import Foundation
import BenchmarkSupport
import Synchronization

/// Hands out flow tickets so that all workers together stop at the flow cap.
final class Tickets: Sendable {
    private let next = Atomic<Int>(0)
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// The next ticket, or `nil` once the cap is reached.
    func take() -> Int? {
        let ticket = next.wrappingAdd(1, ordering: .relaxed).oldValue
        return ticket < limit ? ticket : nil
    }
}

/// What one worker saw.
struct WorkerResult: Sendable {
    var latencies: [Duration] = []
    var stepTotals = [Duration](repeating: .zero, count: FlowStep.allCases.count)
    var signingTotal: Duration = .zero
    var errors = 0
    var errorSamples: [String] = []

    mutating func merge(_ other: WorkerResult) {
        latencies += other.latencies
        for i in stepTotals.indices { stepTotals[i] += other.stepTotals[i] }
        signingTotal += other.signingTotal
        errors += other.errors
        for sample in other.errorSamples where errorSamples.count < 5 && !errorSamples.contains(sample) { errorSamples.append(sample) }
    }
}


/// The value at quantile `q` (nearest rank) of sorted `values`.
func percentile(_ sorted: [Double], _ q: Double) -> Double {
    guard !sorted.isEmpty else { return 0 }
    let rank = Int((q * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}
