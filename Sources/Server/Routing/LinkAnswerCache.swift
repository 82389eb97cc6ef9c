import AASA
import Links

/// The link answers one event loop gave last, by request: a link clicked again — a campaign's link,
/// thousands of times — is answered with the response prepared the first time instead of being matched,
/// routed and rendered again (a landing page is about 220,000 instructions to build). An answer is a pure
/// function of the site's compiled links, the visitor class, the host and the request target, and each
/// entry holds exactly those, the links by reference: a reload makes new compiled links, so an entry of
/// the previous configuration can never match (and its links cannot be freed and their address reused
/// while it is held). Direct-mapped and bounded: a loop keeps at most `slotCount` answers, a few hundred
/// KB of landing pages at worst. Used by one loop only, so it takes no lock.
final class LinkAnswerCache {
    static let slotCount = 64

    /// A class: a lookup reads one reference where a struct's six fields were copied out, four of them
    /// retained and released.
    private final class Entry {
        let links: CompiledLinks
        /// A change to the stored short links makes a new table: no answer given before it is reused.
        let storedLinks: ShortLinkTable?
        let visitor: Visitor
        let host: String
        let target: [UInt8]
        let answer: LinkAnswer

        init(links: CompiledLinks, storedLinks: ShortLinkTable?, visitor: Visitor, host: String, target: [UInt8], answer: LinkAnswer) {
            self.links = links
            self.storedLinks = storedLinks
            self.visitor = visitor
            self.host = host
            self.target = target
            self.answer = answer
        }
    }

    /// Each entry held by one reference taken when stored and given back when replaced: a lookup reads an
    /// entry without retaining and releasing it (two atomic operations per link request), which the
    /// comparisons it makes cannot release.
    private let slots: UnsafeMutablePointer<Unmanaged<Entry>?> = {
        let slots = UnsafeMutablePointer<Unmanaged<Entry>?>.allocate(capacity: slotCount)
        slots.initialize(repeating: nil, count: slotCount)
        return slots
    }()
    private(set) var hits = 0
    private(set) var misses = 0

    deinit {
        for index in 0..<Self.slotCount { slots[index]?.release() }
        slots.deallocate()
    }

    /// Visitors by the User-Agents this loop read last: on a hit the answer costs no signature scan.
    let visitors = VisitorMemo()
    /// Stored links' rules, checked against their site's allowlist once per link and load: a click the
    /// answers above do not hold is routed without the check.
    let storedRules = StoredRuleMemo()

    /// The hash of the host the last request named: a loop's link requests name few hosts, and hashing the
    /// name again for each was about 80 instructions (comparing it with the last one is a word or two).
    private var lastHost = ""
    private var lastHostHash = FNV1a.wordHash(UnsafeRawBufferPointer(start: nil, count: 0))

    /// The target's bytes, the host and the visitor class: a site's hosts, and the classes, land apart.
    private func slot(_ target: UnsafeBufferPointer<UInt8>, _ visitor: Visitor, _ host: String) -> Int {
        if host != lastHost {
            var name = host
            lastHostHash = name.withUTF8 { FNV1a.wordHash(UnsafeRawBufferPointer($0)) }
            lastHost = name
        }
        let hash = FNV1a.wordHash(UnsafeRawBufferPointer(target), seed: lastHostHash ^ visitor.ordinal &* 0x9E37_79B9_7F4A_7C15)
        return Int(truncatingIfNeeded: (hash ^ hash >> 31 ^ hash >> 47) & UInt64(Self.slotCount - 1))
    }

    func answer(
        links: CompiledLinks,
        storedLinks: ShortLinkTable?,
        visitor: Visitor,
        host: String,
        target: UnsafeBufferPointer<UInt8>
    ) -> LinkAnswer? {
        let found = slots[slot(target, visitor, host)]?._withUnsafeGuaranteedRef { entry -> LinkAnswer? in
            guard entry.links === links, entry.storedLinks === storedLinks, entry.visitor == visitor, entry.host == host,
                ByteComparison.equal(entry.target, target)
            else { return nil }
            return entry.answer
        }
        if found == nil { misses += 1 } else { hits += 1 }
        return found
    }

    func store(
        _ answer: LinkAnswer,
        links: CompiledLinks,
        storedLinks: ShortLinkTable?,
        visitor: Visitor,
        host: String,
        target: UnsafeBufferPointer<UInt8>
    ) {
        let index = slot(target, visitor, host)
        slots[index]?.release()
        slots[index] = Unmanaged.passRetained(
            Entry(links: links, storedLinks: storedLinks, visitor: visitor, host: host, target: Array(target), answer: answer)
        )
    }
}

extension Visitor {
    /// A number per class, to seed the slot hash (crawlers and in-app browsers share theirs: an entry
    /// still compares the whole visitor).
    fileprivate var ordinal: UInt64 {
        switch self {
        case .iPhone: return 1
        case .iPad: return 2
        case .android: return 3
        case .desktop: return 4
        case .crawler: return 5
        case .inAppBrowser: return 6
        }
    }
}
