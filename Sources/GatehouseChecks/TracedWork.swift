package import Tracing

/// A child span around a piece of a request's work — a security check, a store call, a bcrypt verification — when
/// the request is traced (its task is in a span: `InstrumentationContext.current`); otherwise `body` alone, for the
/// price of one task-local read.
package enum TracedWork {
    /// Runs `body` in a span named `name` with `attributes`, when the current task is traced.
    package static func run<T>(
        _ name: @autoclosure () -> String, attributes: @autoclosure () -> SpanAttributes = [:],
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
    ) async rethrows -> T {
        guard InstrumentationContext.current != nil else { return try await body() }
        return try await withSpan(name(), isolation: isolation) { span in
            let attributes = attributes()
            if attributes.count > 0 { span.attributes.merge(attributes) }
            return try await body()
        }
    }
}
