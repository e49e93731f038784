import Foundation
import Strata
import StrataVarlink

/// The errors concerning a store that both interfaces reply with (`NoSuchStore`,
/// `StoreUnavailable`, `StoreFailure`), from the registry's ``HostingError`` and the
/// library's `StoreError`. ``AdminInterface`` and ``StoreInterface`` wrap them in their own
/// typed failures; this is where the store's side of the translation lives.
enum StoreErrorReply {
    case noSuchStore(StrataStore.NoSuchStore)
    case unavailable(StrataStore.StoreUnavailable)
    case failure(StrataStore.StoreFailure)

    /// `error` as a store error reply; nil when it is not about a store. `store` names the
    /// store whose work threw (the library's errors do not carry it).
    init?(_ error: any Error, store: String?) {
        switch error {
        case let error as HostingError:
            switch error {
            case .noSuchStore(let name, let known): self = .noSuchStore(.init(store: name, known: known))
            case .unavailable(let name, let reason): self = .unavailable(.init(store: name, reason: reason))
            }
        case let error as StoreError:
            guard let store else { return nil }
            self = .failure(.init(store: store, code: error.code.rawValue, reason: error.description))
        case let error as ObjectContextError:
            guard let store, let storeError = error.storeError else { return nil }
            self = .failure(.init(store: store, code: storeError.code.rawValue, reason: storeError.description))
        default:
            return nil
        }
    }

    /// The reply as one of an interface's failures: both interfaces have the three cases, with
    /// the same payloads (`StrataAdmin.Failure.noSuchStore`, … and `StrataStore.Failure.noSuchStore`, …).
    func failure<Failure: StoreFailures>(as: Failure.Type) -> Failure {
        switch self {
        case .noSuchStore(let parameters): .noSuchStore(parameters)
        case .unavailable(let parameters): .storeUnavailable(parameters)
        case .failure(let parameters): .storeFailure(parameters)
        }
    }
}

/// An interface's typed failure with the three store errors (its enum cases are the witnesses).
protocol StoreFailures {
    static func noSuchStore(_ parameters: StrataStore.NoSuchStore) -> Self
    static func storeUnavailable(_ parameters: StrataStore.StoreUnavailable) -> Self
    static func storeFailure(_ parameters: StrataStore.StoreFailure) -> Self
}

extension StrataAdmin.Failure: StoreFailures {}
extension StrataStore.Failure: StoreFailures {}
