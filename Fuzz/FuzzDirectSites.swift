import AASA

/// Arbitrary bytes as an included file of sites, loaded with and without the reader that decodes common
/// sites straight from their bytes: the same findings, and the same sites — documents, hosts, values,
/// positions and JSON paths — either way. The config names two apps with one ID, so app lists meet the
/// rule that lists an ID once. Both loads are made as `validate` makes them and as a server does (which
/// builds a site without the positions inside it first, and again with them when that gave a finding).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let file = Array(UnsafeBufferPointer(start: data, count: count))
    let config = Array(
        #"{"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop", "same": "ABCDE12345.com.example.shop"}, "include": ["sites.d/*.json"]}"#
            .utf8
    )
    let access = IncludeAccess(
        list: { $0 == "/fuzz/sites.d" ? ["t.json"] : nil },
        stamp: { $0 == "/fuzz/sites.d/t.json" ? "1" : nil }
    )
    func load(directly: Bool, servingOnly: Bool) -> LoadedConfig {
        ConfigLoader.load(
            configBytes: config,
            configPath: "/fuzz/config.json",
            readFile: { $0 == "/fuzz/sites.d/t.json" ? .success(file) : .failure(FileReadError("no such file")) },
            reusing: nil,
            parallel: nil,
            servingOnly: servingOnly,
            includes: access,
            compiled: nil,
            decodesDirectly: directly
        )
    }
    func spelled(_ loaded: LoadedConfig) -> [String] {
        loaded.sites.map { site in
            String(reflecting: site.site) + site.site.hosts.map { " \($0.value)@\(String(reflecting: $0.origin))" }.joined()
                + " \(site.served.array)"
        }
    }
    for servingOnly in [false, true] {
        let direct = load(directly: true, servingOnly: servingOnly)
        let tree = load(directly: false, servingOnly: servingOnly)
        precondition(direct.diagnostics.map(\.description) == tree.diagnostics.map(\.description), "other findings without the tree")
        precondition(spelled(direct) == spelled(tree), "other sites without the tree")
    }
    return 0
}
