/// Byte values of the EPF relational format.
public enum EPFBytes {
    /// Field separator, SOH.
    public static let fieldSeparator: UInt8 = 0x01
    /// First byte of the record terminator, STX.
    public static let recordMark: UInt8 = 0x02
    /// Second byte of the record terminator, LF.
    public static let lineFeed: UInt8 = 0x0A
    /// Field separator of EPF Flat files.
    public static let tab: UInt8 = 0x09
}
