import AASA

/// The JSON parser and the config loader on arbitrary text: no crash, every finding with a position
/// inside the text, and loading twice gives the same result (hosted files are "missing").
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    _ = JSONParser.parse(bytes)
    let load = {
        ConfigLoader.load(configBytes: bytes, configPath: "/fuzz/config.json", readFile: { _ in .failure(FileReadError("no such file")) })
    }
    let first = load()
    for finding in first.diagnostics {
        if let location = finding.location, finding.file == nil || finding.file == "/fuzz/config.json" {
            precondition(location.offset >= 0 && location.offset <= bytes.count, "a finding points outside the text")
        }
    }
    let second = load()
    precondition(first.diagnostics.map(\.description) == second.diagnostics.map(\.description), "loading is not deterministic")
    precondition(first.sites.map(\.bytes) == second.sites.map(\.bytes))
    return 0
}
