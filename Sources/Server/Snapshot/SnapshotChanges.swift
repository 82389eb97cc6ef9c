import AASA

/// Hosts added, removed and changed: counted, and the first few named (log lines stay one line).
struct SnapshotChanges {
    /// The alphabetically first few hosts and how many there are in all.
    struct Listing {
        static let shown = 5
        private(set) var first: [String] = []
        private(set) var count = 0

        init() {}

        init(_ hosts: [String]) { for host in hosts { add(host) } }

        /// Keeps the smallest `shown` names, so a 10,000-host reload does not sort 10,000 strings.
        mutating func add(_ host: String) {
            count += 1
            if first.count == Self.shown, let last = first.last, host >= last { return }
            let position = first.firstIndex { host < $0 } ?? first.count
            first.insert(host, at: position)
            if first.count > Self.shown { first.removeLast() }
        }

        var isEmpty: Bool { count == 0 }

        var text: String {
            first.joined(separator: ", ") + (count > first.count ? " and \(count - first.count) more" : "")
        }
    }

    var added = Listing()
    var removed = Listing()
    var changed = Listing()

    init(added: [String] = [], removed: [String] = [], changed: [String] = []) {
        self.added = Listing(added)
        self.removed = Listing(removed)
        self.changed = Listing(changed)
    }

    /// Adds the differences between two groups of sites that share no host with any other site.
    mutating func compare(before: [SiteResponses], after: [SiteResponses]) {
        var old: [HostPattern: UInt64] = [:]
        for site in before { for host in site.hosts { old[host] = site.contentHash } }
        var new: [HostPattern: UInt64] = [:]
        for site in after { for host in site.hosts { new[host] = site.contentHash } }
        for (host, hash) in new {
            if let previous = old[host] {
                if previous != hash { changed.add(host.description) }
            } else {
                added.add(host.description)
            }
        }
        for host in old.keys where new[host] == nil { removed.add(host.description) }
    }

    var summary: String {
        if added.isEmpty && removed.isEmpty && changed.isEmpty { return "no host changed" }
        var parts: [String] = []
        if !added.isEmpty { parts.append("hosts added: " + added.text) }
        if !removed.isEmpty { parts.append("hosts removed: " + removed.text) }
        if !changed.isEmpty { parts.append("hosts changed: " + changed.text) }
        return parts.joined(separator: "; ")
    }
}
