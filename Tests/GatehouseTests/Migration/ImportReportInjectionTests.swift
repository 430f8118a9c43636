import Foundation
import Testing

/// Hostile input round 3, finding 4 (issue 54): `gatehouse import-mfp` wrote its report as YAML comments above the
/// policy, and a line break (`&#10;`) in an adapter.xml `class` attribute ended the comment: what followed was policy —
/// a confidential client with `gatehouse.admin` — and the importer said "The policy loads." Every note is one line now.
/// The output is read by PyYAML (a YAML 1.1 reader we did not write, which also breaks lines at NEL, U+2028 and U+2029).
@Suite(.timeLimit(.minutes(3))) struct ImportReportInjectionTests {
    /// What an attacker's adapter.xml writes after each line break.
    static let payload = "confidentialClients: [{id: evil, secretHash: '$2b$04$axi4I88RAaRiFuao0JVORezeW1NmWqrlkcjbmbaiCdWPCDsWSH.J2', allowedScope: gatehouse.admin}]"

    @Test(arguments: ["&#10;", "&#13;", "&#x85;", "&#x2028;", "&#x2029;"])
    func aLineBreakInADescriptorNeverBecomesPolicy(lineBreak: String) async throws {
        let root = TestServer.temporaryDirectory() + "-inject"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        // The class's last component is a built-in's name, so that the imported policy loads as it is.
        let attribute = "com.acme\(lineBreak)\(Self.payload)\(lineBreak)#.PinCodeAttempts"
        try """
            <?xml version="1.0" encoding="UTF-8"?>
            <mfp:adapter name="Pin" xmlns:mfp="http://www.ibm.com/mfp/integration">
              <securityCheckDefinition name="Pin\(lineBreak)\(Self.payload)\(lineBreak)x" class="\(attribute)">
                <property name="pinCode" defaultValue="1234"/>
              </securityCheckDefinition>
            </mfp:adapter>
            """.write(toFile: root + "/adapter.xml", atomically: true, encoding: .utf8)
        let out = root + "/policy.yaml"
        let imported = try await runOffThePool(GatehouseProcess.executable.path, ["import-mfp", root + "/adapter.xml", "--out", out, "--cost", "4"])
        #expect(imported.status == 0, "\(imported.output)")
        // The report says what the class was, escaped on one line.
        #expect(imported.output.contains("class com.acme\\u{"), "\(imported.output)")
        let yaml = try String(contentsOfFile: out, encoding: .utf8)
        // Every line of the report is a comment (split as YAML 1.1 splits lines).
        let header = yaml.components(separatedBy: "\n\n").first ?? ""
        let lines = header.unicodeScalars.split { ["\n", "\r", "\u{85}", "\u{2028}", "\u{2029}"].contains($0) }.map { String(String.UnicodeScalarView($0)) }
        #expect(lines.allSatisfy { $0.hasPrefix("#") }, "\(lines)")
        // PyYAML reads one security check and nothing else: no confidential client, no other top-level key.
        let script = """
            import json, sys, yaml
            document = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
            print(json.dumps({"keys": sorted(document.keys()), "checks": sorted(document.get("securityChecks", {}).keys())}))
            """
        let read = try await runOffThePool("/usr/bin/env", ["python3", "-c", script, out])
        #expect(read.status == 0, "\(read.output)")
        let parsed = try JSONSerialization.jsonObject(with: Data(read.output.utf8)) as? [String: [String]]
        #expect(parsed?["keys"] == ["securityChecks"], "\(read.output)\n\(yaml)")
        // The check's name stays one value, line breaks and all (the YAML encoder quotes it).
        #expect(parsed?["checks"]?.count == 1 && parsed?["checks"]?.first?.hasPrefix("Pin") == true, "\(read.output)")
    }
}
