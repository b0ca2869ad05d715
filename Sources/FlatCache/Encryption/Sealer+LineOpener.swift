import Foundation

extension Sealer {
    /// Opens sealed lines of one data file one at a time, all with one cipher.
    ///
    /// For reading a few lines of a file (a page on first touch): opening
    /// each through ``Sealer/open(_:fileName:firstLine:)`` would set up a
    /// cipher, the key's schedule with it, for every line. Each line's
    /// Base64 is decoded into one buffer kept for the next line, then opened
    /// straight into the record's bytes. Not shared between threads: make one per read.
    final class LineOpener {
        private let cipher: AESGCM
        private let associatedData: [UInt8]
        /// The sealed bytes of the line being opened; grows to the longest line.
        private var sealed = [UInt8]()

        /// An opener for the lines of the data file `name`, under `sealer`'s key.
        convenience init(_ sealer: Sealer, fileName name: String) {
            self.init(sealer, associatedData: Sealer.associatedData(fileName: name))
        }

        /// An opener for lines sealed with `associatedData` (an appended line's, see
        /// ``Sealer/associatedData(fileName:appended:)``), under `sealer`'s key.
        init(_ sealer: Sealer, associatedData: [UInt8]) {
            cipher = AESGCM(key: sealer.key)
            self.associatedData = associatedData
        }

        /// The record inside the line at `range` of `body` (without its `\n`),
        /// line `number` (from 1) of the file.
        ///
        /// - Throws: ``Corruption/invalidBase64(line:)``, or
        ///   ``Corruption/unsealable(line:)`` when it does not open: a line
        ///   moved from another file, a changed byte, another key.
        func record(inLine range: Range<Int>, of body: Data, number: Int) throws(Corruption) -> Data {
            // + 3: room for the decoder's last group, as RecordLines.decode leaves.
            let room = Base64.maximumDecodedCount(of: range.count) + 3
            if sealed.count < room { sealed = [UInt8](repeating: 0, count: room) }
            let decoded: Int? = sealed.withUnsafeMutableBufferPointer { output in
                body.withUnsafeBytes { Base64.decode(UnsafeRawBufferPointer(rebasing: $0[range]), into: output.baseAddress!) }
            }
            guard let decoded else { throw .invalidBase64(line: number) }
            // One spare byte: a buffer of no bytes may have no address to write at.
            var plain = Data(count: max(0, decoded - AESGCM.overhead) + 1)
            let opened = plain.withUnsafeMutableBytes { output in
                associatedData.withUnsafeBytes { associated in
                    sealed.withUnsafeBytes { bytes in
                        cipher.open(
                            UnsafeRawBufferPointer(rebasing: bytes[..<decoded]), associatedData: associated,
                            into: output.baseAddress!)
                    }
                }
            }
            guard opened else { throw .unsealable(line: number) }
            plain.count -= 1
            return plain
        }
    }
}
