import Foundation
import TestSupport
import Testing

@testable import TLS

/// A load parses each certificate and key once: inside `PEMParseSharing.during` the same bytes give the
/// same parsed objects, each caller's own reference, still good after the load lets its copies go.
@Suite("PEM parsed once per load")
struct PEMParseSharingTests {
    @Test("Inside a load the same chain and key are the same objects; outside, parsed afresh; every reference stays good")
    func shared() throws {
        let pki = try TestPKI()
        let (first, second, firstKey, secondKey) = PEMParseSharing.during {
            let first = PEMMaterial()
            first.chain = PEMMaterial.certificates(pki.shop.certificate)
            first.key = PEMMaterial.privateKey(pki.shop.key)
            let second = PEMMaterial()
            second.chain = PEMMaterial.certificates(pki.shop.certificate)
            second.key = PEMMaterial.privateKey(pki.shop.key)
            // Nested, as a load inside a load would be: the outer one's parses are reused.
            let nested = PEMParseSharing.during { PEMMaterial.certificates(pki.shop.certificate) }
            #expect(nested == first.chain)
            let holder = PEMMaterial()
            holder.chain = nested
            return (first, second, first.key, second.key)
        }
        #expect(!first.chain.isEmpty && first.chain == second.chain)
        #expect(firstKey != nil && firstKey == secondKey)
        // The load is over: each holder still owns a reference of its own, so the parsed objects are usable.
        let findings = CertificateInspector.check(
            chainPEM: pki.shop.certificate,
            keyPEM: pki.shop.key,
            hosts: ["example.com"],
            now: Int(Date().timeIntervalSince1970),
            developmentCertificateExpected: true
        )
        #expect(findings.filter(\.isError).isEmpty, "\(findings)")
        let other = PEMMaterial()
        other.chain = PEMMaterial.certificates(pki.shop.certificate)
        #expect(other.chain != first.chain, "outside a load nothing is kept")
        #expect(CertificateInspector.leafNames(pki.shop.certificate)?.contains("example.com") == true)
    }
}
