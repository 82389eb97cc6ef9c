/// A config's Apple app names as a reader of its text looks them up: straight from the bytes.
///
/// Every site names its apps (two lists for a common site), and a config defines a handful of names: the
/// name's bytes compared with each of those is cheaper than making the name a `String` and hashing it
/// for the table (a third of reading an app list). A config with many names is looked up in the table.
struct AppNames: Sendable {
    let table: AppTable
    /// Each name's bytes, its app ID, and the list of that one app without a position; nil when there
    /// are too many names to compare one by one.
    private let few: [(name: [UInt8], id: String, alone: [Located<String>])]?

    static let comparedOneByOne = 16

    init(_ table: AppTable) {
        self.table = table
        few = table.apple.count <= Self.comparedOneByOne ? table.apple.map { (Array($0.key.utf8), $0.value, [Located($0.value)]) } : nil
    }

    /// The app ID the name written as `bytes` stands for, as `table.apple` gives it, and the list of that
    /// app alone: the same list for every site that names only it and keeps no positions (a served site),
    /// instead of an array made and freed for each of them.
    func id(named bytes: UnsafeBufferPointer<UInt8>) -> (id: String, alone: [Located<String>]?)? {
        guard let few else { return table.apple[String(decoding: bytes, as: UTF8.self)].map { ($0, nil) } }
        for entry in few where entry.name.count == bytes.count {
            let same = entry.name.withUnsafeBytes { ByteComparison.equal($0, UnsafeRawBufferPointer(bytes)) }
            if same { return (entry.id, entry.alone) }
        }
        return nil
    }
}
