import ArgumentParser
import Foundation
import GatehouseHTTP
import Logging

/// `--otlp-endpoint` and `--trace-sample-ratio`, shared by `serve` and `gateway`: OpenTelemetry traces, off unless a
/// collector is named. OpenTelemetry's own variables are read too, as every OpenTelemetry SDK reads them:
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the full URL) or `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL),
/// `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER_ARG`.
struct TracingOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "An OpenTelemetry collector (OTLP/HTTP, JSON) to send traces to, e.g. http://127.0.0.1:4318: a span per request, with its security checks, store calls, bcrypt runs and upstream exchanges. Default: OTEL_EXPORTER_OTLP_ENDPOINT, else no traces.",
        valueName: "url"))
    var otlpEndpoint: String?

    @Option(help: ArgumentHelp("The share of new traces recorded, 0 to 1 (a caller's trace follows its sampled flag). Default: OTEL_TRACES_SAMPLER_ARG, else 1.",
                               valueName: "ratio"))
    var traceSampleRatio: Double?

    func validate() throws {
        if let traceSampleRatio, !(0...1).contains(traceSampleRatio) { throw ValidationError("--trace-sample-ratio must be between 0 and 1") }
        if let otlpEndpoint { _ = try Self.checkedURL(otlpEndpoint, option: "--otlp-endpoint") }
    }

    static func checkedURL(_ text: String, option: String) throws -> String {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil else {
            throw ValidationError("\(option) must be an http(s) URL, e.g. http://127.0.0.1:4318")
        }
        return text
    }

    /// The tracer these options (and the environment) ask for; `nil` when no collector is named.
    func tracer(serviceName: String, version: String, logger: Logger,
                environment: [String: String] = ProcessInfo.processInfo.environment) throws -> OTLPTracer? {
        let endpoint: String
        if let otlpEndpoint {
            endpoint = otlpEndpoint
        } else if let full = environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"], !full.isEmpty {
            endpoint = try Self.checkedURL(full, option: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        } else if let base = environment["OTEL_EXPORTER_OTLP_ENDPOINT"], !base.isEmpty {
            endpoint = try Self.checkedURL(base, option: "OTEL_EXPORTER_OTLP_ENDPOINT")
        } else {
            return nil
        }
        var headers: [(String, String)] = []
        if let text = environment["OTEL_EXPORTER_OTLP_HEADERS"], !text.isEmpty {
            guard let parsed = OTLPExporter.headers(parsing: text) else {
                throw ValidationError("OTEL_EXPORTER_OTLP_HEADERS must be name=value pairs separated by commas")
            }
            headers = parsed
        }
        var ratio = traceSampleRatio ?? 1
        if traceSampleRatio == nil, let text = environment["OTEL_TRACES_SAMPLER_ARG"], !text.isEmpty {
            guard let value = Double(text), (0...1).contains(value) else { throw ValidationError("OTEL_TRACES_SAMPLER_ARG must be between 0 and 1") }
            ratio = value
        }
        let name = environment["OTEL_SERVICE_NAME"].flatMap { $0.isEmpty ? nil : $0 } ?? serviceName
        let exporter = OTLPExporter(endpoint: endpoint, headers: headers, serviceName: name, serviceVersion: version, logger: logger)
        logger.info("Traces go to \(exporter.endpoint) (\(ratio == 1 ? "every request" : "\(ratio) of new traces"))")
        return OTLPTracer(exporter: exporter, sampleRatio: ratio)
    }
}
