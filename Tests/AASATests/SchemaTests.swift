import Foundation
import TestSupport
import Testing

@testable import AASA

/// config/aasa-server.schema.json must say what the decoder accepts, no more and no less.
@Suite("JSON Schema agrees with the decoder")
struct SchemaTests {
    static let schemaPath = Fixtures.repositoryRoot + "/config/aasa-server.schema.json"

    static func schema() throws -> JSONNode {
        try #require(JSONParser.parse(try Fixtures.read(schemaPath)).root)
    }

    static func propertyNames(_ node: JSONNode?) -> [String] {
        (node?["properties"]?.objectValue ?? []).map(\.key).sorted()
    }

    @Test("Each object in the schema lists exactly the keys the decoder knows, and forbids others")
    func keySets() throws {
        let schema = try Self.schema()
        let definitions = try #require(schema["$defs"])
        let pairs: [(String, JSONNode?, [String])] = [
            ("root", schema, ConfigDecoder.rootKeys),
            ("site", definitions["site"], ConfigDecoder.siteKeys),
            ("applinks", definitions["applinks"], ConfigDecoder.applinksKeys),
            ("details", definitions["details"], ConfigDecoder.detailsKeys),
            ("service", definitions["service"], ConfigDecoder.serviceKeys),
            ("component", definitions["component"], AASADecoder.componentKeys),
            ("options", definitions["options"], AASADecoder.optionKeys),
            ("server", schema["properties"]?["server"], ServerSettings.keys),
            ("listener", definitions["listener"]?["oneOf"]?.arrayValue?.last, ServerSettings.listenerKeys),
            ("limits", schema["properties"]?["server"]?["properties"]?["limits"], ServerSettings.limitKeys),
            ("certificate", definitions["certificate"], ServerSettings.certificateKeys),
            ("reload", schema["properties"]?["server"]?["properties"]?["reload"], ServerSettings.reloadKeys),
            ("timeouts", schema["properties"]?["server"]?["properties"]?["timeouts"], ServerSettings.timeoutKeys),
            ("app entry", definitions["appEntry"], ConfigDecoder.appEntryKeys),
            ("android app", definitions["androidAppDefinition"], ConfigDecoder.androidKeys.filter { $0 != "app" }),
            ("android app reference", definitions["androidApp"]?["oneOf"]?.arrayValue?.last, ["app", "comment", "relations"]),
            ("links", definitions["links"], ConfigDecoder.linksKeys),
            ("link rule", definitions["linkRule"], ConfigDecoder.linkRuleKeys),
            ("link rule ios", definitions["linkRule"]?["properties"]?["ios"], ConfigDecoder.iosRouteKeys),
            ("link rule android", definitions["linkRule"]?["properties"]?["android"], ConfigDecoder.androidRouteKeys),
            ("link preview", definitions["linkRule"]?["properties"]?["preview"], ConfigDecoder.previewKeys),
        ]
        for (name, node, keys) in pairs {
            #expect(node != nil, "schema has no \(name)")
            #expect(Self.propertyNames(node) == keys.sorted(), "\(name) keys")
            #expect(node?["additionalProperties"]?.boolValue == false, "\(name) must reject unknown keys")
        }
        let policies = (schema["properties"]?["unknownHost"]?["enum"]?.arrayValue ?? []).compactMap(\.stringValue)
        #expect(policies.sorted() == UnknownHostPolicy.allCases.map(\.rawValue).sorted())
        let formats = (definitions["applinks"]?["properties"]?["formats"]?["items"]?["enum"]?.arrayValue ?? [])
            .compactMap(\.stringValue)
        #expect(formats.sorted() == AppLinksFormat.allCases.map(\.rawValue).sorted())
    }

    /// Configs the decoder rejects for their shape; the schema must reject them as well.
    static let shapeErrors: [String] = [
        #"{"version": 1, "sites": [], "unknownHosts": "empty"}"#,
        #"{"version": 1, "sites": [{"hosts": ["a.com"], "applinks": {"details": [{"apps": ["A"], "components": [{"exlude": true}]}]}}]}"#,
        #"{"version": 1, "sites": [{"hosts": ["a.com"], "applinks": {"details": [{"apps": ["A"], "components": [{"exclude": "true"}]}]}}]}"#,
        #"{"version": 1, "sites": [{"hosts": ["a.com"], "file": "x.json", "webcredentials": {"apps": ["A.b"]}}]}"#,
        #"{"version": 1, "sites": [{"hosts": ["a.com"]}]}"#,
        #"{"version": 1, "sites": [{"hosts": ["a.com"], "applinks": {"formats": ["new"], "details": []}}]}"#,
        #"{"version": 1, "sites": [], "unknownHost": "403"}"#,
        #"{"version": 1, "sites": [], "server": {"listen": "x"}}"#,
        #"{"version": 1, "sites": [], "server": {"timeouts": {"header": "10s"}}}"#,
        #"{"version": 1, "sites": [], "server": {"listen": [{"address": "::1"}]}}"#,
        #"{"version": 2, "sites": []}"#,
        #"{"version": 1, "sites": [{"hosts": ["a.com"], "android": [{"package": "com.a.b"}]}]}"#,
        #"{"version": 1, "sites": [{"hosts": ["a.com"], "android": [{"pakage": "com.a.b", "sha256": ["AA"]}]}]}"#,
        #"{"version": 1, "sites": [{"hosts": ["a.com"], "android": ["a"], "assetlinksFile": "x.json"}]}"#,
        #"{"version": 1, "apps": {"a": {"android": {"package": "com.a.b"}}}, "sites": []}"#,
        #"{"version": 1, "apps": {"a": {"ios": "ABCDE12345.com.a.b"}}, "sites": []}"#,
        #"{"version": 1, "sites": [{"hosts": ["a.com"], "links": {"rules": [{"/": "/*", "web": "/relative"}]}}]}"#,
        #"{"version": 1, "sites": [{"hosts": ["a.com"], "links": {"rules": [{"/": "/*", "web": "https://a.com/", "ios": {"fallbak": "https://a.com/"}}]}}]}"#,
        #"{"version": 1, "sites": [{"hosts": ["a.com"], "links": {"rules": [{"/": "/*", "web": "https://a.com/", "preview": {"image": "http://a.com/i.png"}}]}}]}"#,
        #"{"version": 1, "apps": {"a": {"apple": "ABCDE12345.com.a.b", "appStoreID": "id123"}}, "sites": []}"#,
    ]

    @Test("The bundled configs pass the schema, and shapes the decoder rejects fail it (python3 jsonschema)")
    func schemaValidation() throws {
        for json in Self.shapeErrors {
            let decoded = ConfigDecoder.decode(Array(json.utf8))
            #expect(decoded.diagnostics.hasErrors, "decoder should reject \(json)")
        }
        let examples = [
            "example.json", "examples/multi-domain.json", "examples/multi-environment.json", "examples/verbatim-files.json",
            "examples/https.json", "examples/acme.json", "examples/link-domain.json",
        ]
        .map { Fixtures.repositoryRoot + "/config/" + $0 }
        let script = """
            import json, sys, jsonschema
            schema = json.load(open(sys.argv[1]))
            validator = jsonschema.Draft202012Validator(schema)
            jsonschema.Draft202012Validator.check_schema(schema)
            for path in sys.argv[2:]:
                document = json.load(open(path)) if path.startswith("/") else json.loads(path)
                print("ok" if validator.is_valid(document) else "invalid")
            """
        let output = try runPython(script, arguments: [Self.schemaPath] + examples + Self.shapeErrors)
        let verdicts = output.split(separator: "\n").map(String.init)
        #expect(verdicts == Array(repeating: "ok", count: examples.count) + Array(repeating: "invalid", count: Self.shapeErrors.count))
    }

    private func runPython(_ script: String, arguments: [String]) throws -> String {
        // Debian's interpreter with python3-jsonschema, which .ci/run installs.
        let process = Process()
        // `timeout` bounds the wait: a hung interpreter fails the test instead of hanging the run.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["60", "/usr/bin/python3", "-c", script] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        #expect(process.terminationStatus == 0, "python3 failed (is python3-jsonschema installed?): \(text)")
        return text
    }
}
