extension QRCode {
    /// The quiet zone the standard asks for around a code: four modules of light on every side.
    public static let quietZone = 4

    /// The code as SVG: a light square and one path of dark runs, in module units (`viewBox`), drawn
    /// `pixelsPerModule` wide by default and sharp at any scale (`crispEdges`). Nothing in it but geometry:
    /// no text, no script, no link — the same bytes for the same code.
    public func svg(pixelsPerModule: Int = 8) -> String {
        let span = size + 2 * Self.quietZone
        var path = ""
        for (y, row) in modules.enumerated() {
            var x = 0
            while x < size {
                guard row[x] else {
                    x += 1
                    continue
                }
                let start = x
                while x < size && row[x] { x += 1 }
                path += "M\(start + Self.quietZone) \(y + Self.quietZone)h\(x - start)v1h-\(x - start)z"
            }
        }
        let pixels = span * pixelsPerModule
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(span) \(span)" width="\(pixels)" height="\(pixels)" \
            shape-rendering="crispEdges"><rect width="\(span)" height="\(span)" fill="#fff"/>\
            <path fill="#000" d="\(path)"/></svg>

            """
    }

    /// The code as a PNG of one bit per pixel, `pixelsPerModule` pixels per module, quiet zone included.
    /// `zlib` compresses the scanlines (PNG's IDAT is a zlib stream); kept out so this stays pure.
    public func png<Failure: Error>(pixelsPerModule: Int = 8, zlib: ([UInt8]) throws(Failure) -> [UInt8]) throws(Failure) -> [UInt8] {
        let span = (size + 2 * Self.quietZone) * pixelsPerModule
        let rowBytes = (span + 7) / 8
        var scanlines = [UInt8]()
        scanlines.reserveCapacity((rowBytes + 1) * span)
        for pixelY in 0..<span {
            let y = pixelY / pixelsPerModule - Self.quietZone
            scanlines.append(0)  // filter type None
            var packed = [UInt8](repeating: 0xFF, count: rowBytes)
            if (0..<size).contains(y) {
                for x in 0..<size where modules[y][x] {
                    for pixelX in ((x + Self.quietZone) * pixelsPerModule)..<((x + Self.quietZone + 1) * pixelsPerModule) {
                        packed[pixelX >> 3] &= ~(0x80 >> UInt8(pixelX & 7))
                    }
                }
            }
            scanlines += packed
        }
        return try PNG.grayscale(width: span, height: span, bitDepth: 1, scanlines: zlib(scanlines))
    }
}
