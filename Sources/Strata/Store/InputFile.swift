import Foundation

/// Reads the files that come from outside — model files, manifests, stage files, Core Data
/// `contents`, configuration — safely:
///
/// - only a regular file is read: a FIFO, socket or device is refused **without blocking**
///   (the file is opened with `O_NONBLOCK` and checked with `fstat`, so that a FIFO put in
///   place of a model file cannot hang `stratactl` or keep the daemon from becoming ready);
/// - a file larger than the caller's limit is refused before it is read.
package enum InputFile {
    /// Why a file could not be read.
    package enum Failure: Error, Sendable, Hashable {
        case missing
        /// Not a regular file: `kind` says what it is ("a FIFO", "a directory", …).
        case notRegular(kind: String)
        /// Larger than the limit, which `limitName` names for the message.
        case tooLarge(size: Int, limit: Int, limitName: String)
        /// `open` or `read` failed: the system's message.
        case unreadable(String)

        /// What is wrong and what to do, for an error message about the file.
        package var reason: String {
            switch self {
            case .missing: return "no such file"
            case .notRegular(let kind): return "the path is \(kind), not a regular file; give the path of a file"
            case .tooLarge(let size, let limit, let name): return "the file is \(size) bytes, more than the limit of \(limit) bytes (\(name)); is this the right file?"
            case .unreadable(let message): return "cannot read the file: \(message)"
            }
        }
    }

    /// The bytes of the regular file at `path`, at most `limit` of them (`limitName` names
    /// the limit in the error).
    package static func read(_ path: String, limit: Int, limitName: String) throws(Failure) -> Data {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            throw code == ENOENT ? .missing : .unreadable(String(cString: strerror(code)))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .unreadable(String(cString: strerror(errno))) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .notRegular(kind: describe(mode: info.st_mode)) }
        let size = Int(info.st_size)
        guard size <= limit else { throw .tooLarge(size: size, limit: limit, limitName: limitName) }
        var data = Data(count: size + 1)
        var total = 0
        // Read until EOF (the file may have changed size since fstat), never past limit + 1.
        while total < data.count {
            let n = data.withUnsafeMutableBytes { buffer in
                Foundation.read(fd, buffer.baseAddress! + total, buffer.count - total)
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw .unreadable(String(cString: strerror(errno)))
            }
            if n == 0 { break }
            total += n
        }
        guard total <= limit else { throw .tooLarge(size: total, limit: limit, limitName: limitName) }
        data.count = total
        return data
    }

    /// What the file at `path` is when it is not a regular file ("a FIFO", "a directory", …);
    /// nil for a regular file or a missing path. Follows symbolic links.
    package static func nonRegularKind(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_mode & S_IFMT == S_IFREG ? nil : describe(mode: info.st_mode)
    }

    static func describe(mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: return "a FIFO (named pipe)"
        case S_IFSOCK: return "a socket"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFDIR: return "a directory"
        case S_IFLNK: return "a symbolic link"
        default: return "not a regular file"
        }
    }
}
