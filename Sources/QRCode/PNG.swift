/// The few bytes of a PNG file (RFC 2083 / ISO/IEC 15948) around image data that is already filtered
/// and zlib-compressed: the signature, IHDR, one IDAT and IEND, each chunk with its CRC-32.
public enum PNG {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    public static func grayscale(width: Int, height: Int, bitDepth: UInt8, scanlines compressed: [UInt8]) -> [UInt8] {
        var header = [UInt8]()
        header += bigEndian(UInt32(width))
        header += bigEndian(UInt32(height))
        // Bit depth, colour type 0 (grayscale), deflate, adaptive filtering, no interlace.
        header += [bitDepth, 0, 0, 0, 0]
        return signature + chunk("IHDR", header) + chunk("IDAT", compressed) + chunk("IEND", [])
    }

    static func chunk(_ type: StaticString, _ data: [UInt8]) -> [UInt8] {
        let typeAndData = type.withUTF8Buffer { Array($0) } + data
        return bigEndian(UInt32(data.count)) + typeAndData + bigEndian(CRC32.checksum(typeAndData))
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}

/// CRC-32 as PNG and zlib define it (reflected, polynomial 0xEDB88320).
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
