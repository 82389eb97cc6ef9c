import AASA
import Gzip
import HTTP1
import Links
import QRCode

/// `/_/qr/<suffix>.svg` and `.png` on a link domain: the QR code of the stored short link
/// `https://<host>/<suffix>`, for print and slides. Only for a link that exists and is active, so the path
/// cannot be used to draw codes of arbitrary text; the image depends on nothing but the link's address, so
/// a day of caching by anyone is right. Drawing one is pure computation (a PNG's zlib pass included, no
/// system call), and each loop keeps the answer in its link answer cache: a code printed on a poster and
/// scanned a thousand times is drawn once.
enum ShortLinkQRCodes {
    static let prefix = Array((ReservedPaths.prefix + "qr/").utf8)

    enum Format {
        case svg, png
    }

    /// The suffix and the format a name ends with; nil for any other name.
    static func parse(_ name: String) -> (suffix: String, format: Format)? {
        if name.hasSuffix(".svg") { return (String(name.dropLast(4)), .svg) }
        if name.hasSuffix(".png") { return (String(name.dropLast(4)), .png) }
        return nil
    }

    static func answer(_ name: String, host: String, storedLinks: ShortLinkTable?) -> PreparedResponse {
        guard let (suffix, format) = parse(name), !suffix.isEmpty, !suffix.contains("/"),
            let link = storedLinks?.link(domain: host, path: "/" + suffix)
        else { return notFound }
        guard link.state == .active, storedLinks?.disabledDomains.contains(link.domain) != true else { return gone }
        guard let code = QRCode(link.shortLink) else { return notFound }
        switch format {
        case .svg:
            return image(contentType: "image/svg+xml", Array(code.svg().utf8))
        case .png:
            // A zlib failure on a few kilobytes in memory is not a thing the request could fix: the 500
            // says so rather than a broken image.
            guard let png = try? code.png(zlib: { bytes throws(ZlibError) in try Gzip.zlibStream(bytes) }) else {
                return StandardResponses.error(status: 500, "the QR code could not be compressed")
            }
            return image(contentType: "image/png", png)
        }
    }

    static func image(contentType: String, _ body: [UInt8]) -> PreparedResponse {
        PreparedResponse(
            status: 200,
            headers: [
                ("Server", "aasa-server"), ("Content-Type", contentType), ("Cache-Control", "public, max-age=86400"),
                ("X-Content-Type-Options", "nosniff"),
                // An SVG opened on its own is a document: nothing in it may run or load.
                ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'"),
            ],
            body: body
        )
    }

    static let notFound = StandardResponses.error(
        status: 404,
        "no short link with that suffix on this host: its QR code is /_/qr/SUFFIX.svg or .png"
    )
    static let gone = StandardResponses.error(status: 410, "this short link was disabled")
}
