import AASA
import Testing

@testable import Links

/// The console's form as a browser encodes it, turned into the API's own body: `+` and `%XX` decoded,
/// empty fields left out, anything that is not one of the form's fields refused.
@Suite("The console's form for a new link")
struct ConsoleLinkFormTests {
    @Test("Fields decode as a browser encodes them and make the native body; a ticked box asks for the shortest suffix")
    func decode() throws {
        let body = "domain=go.example.com&link=https%3A%2F%2Fexample.com%2Fa%3Fq%3D1%2B2&alias=&st=Tom+%26+Jerry&sd=caf%C3%A9&short=on&ifl="
        let values = try ConsoleLinkForm.values(Array(body.utf8)).get()
        #expect(
            values == ["domain": "go.example.com", "link": "https://example.com/a?q=1+2", "st": "Tom & Jerry", "sd": "café", "short": "on"]
        )
        let native = try #require(JSONParser.parse(ConsoleLinkForm.nativeBody(values)).root)
        #expect(native["domain"]?.stringValue == "go.example.com")
        #expect(native["parameters"]?["link"]?.stringValue == "https://example.com/a?q=1+2")
        #expect(native["parameters"]?["st"]?.stringValue == "Tom & Jerry" && native["parameters"]?["ifl"] == nil)
        #expect(native["suffix"] == nil)
        guard case .bool(true)? = native["short"]?.value else {
            Issue.record("a ticked box is \"short\": true")
            return
        }
        let aliased = try #require(JSONParser.parse(ConsoleLinkForm.nativeBody(["domain": "d", "link": "l", "alias": "spring"])).root)
        #expect(aliased["suffix"]?.stringValue == "spring" && aliased["short"] == nil)
    }

    @Test("An unknown field, a field given twice, bytes that are not UTF-8, or too much: refused in words")
    func refusals() {
        for (body, detail) in [
            ("link=a&password=b", "the form has no field 'password'"), ("link=a&link=b", "the field 'link' is given twice"),
            (String(repeating: "a", count: ConsoleLinkForm.bodyLimit + 1), "the form is over \(ConsoleLinkForm.bodyLimit) bytes"),
        ] {
            guard case .failure(let problem) = ConsoleLinkForm.values(Array(body.utf8)) else {
                Issue.record("\(body.prefix(40)) is not refused")
                continue
            }
            #expect(problem.status == 400 && problem.detail == detail)
        }
        guard case .failure(let problem) = ConsoleLinkForm.values([0x6C, 0x3D, 0xFF]) else {
            Issue.record("bytes that are not UTF-8 are not refused")
            return
        }
        #expect(problem.detail == "the form is not UTF-8 text")
    }

    @Test("A refusal's JSON path names the form's field")
    func fields() {
        #expect(ConsoleLinkForm.field(of: "$.parameters.ofl") == "ofl")
        #expect(ConsoleLinkForm.field(of: "$.suffix") == "alias")
        #expect(ConsoleLinkForm.field(of: "$.domain") == "domain")
        #expect(ConsoleLinkForm.field(of: "$.parameters.apn") == nil)
        #expect(ConsoleLinkForm.field(of: nil) == nil)
    }
}
