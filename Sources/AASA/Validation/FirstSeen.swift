/// The first value recorded for each key. Documents have a handful of app IDs and paths each, and for
/// those a scan beats hashing every key; past a few dozen keys a dictionary takes over.
struct FirstSeen<Value> {
    private var few: [(key: String, value: Value)] = []
    private var many: [String: Value]?

    subscript(key: String) -> Value? {
        if let many { return many[key] }
        return few.first { $0.key == key }?.value
    }

    mutating func insertIfAbsent(_ key: String, _ value: Value) {
        if many == nil && few.count >= 32 {
            var index: [String: Value] = [:]
            for entry in few where index[entry.key] == nil { index[entry.key] = entry.value }
            many = index
            few = []
        }
        if many != nil {
            if many?[key] == nil { many?[key] = value }
        } else if !few.contains(where: { $0.key == key }) {
            few.append((key, value))
        }
    }
}
