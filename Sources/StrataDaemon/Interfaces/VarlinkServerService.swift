import Logging
import ServiceLifecycle
import StrataVarlink

/// One bound ``VarlinkServer`` as a service of the daemon's group: serves until the server
/// quiesces and its connections have ended, then waits for its own turn in the group's
/// shutdown. Quiescing is started by ``SystemdLifecycleService`` for both sockets at once (no
/// socket keeps accepting while the other drains), or here if nothing did; cancellation (the
/// group's shutdown deadline, `limits.shutdown_timeout`) closes the connections still open.
struct VarlinkServerService: Service, CustomStringConvertible {
    let server: VarlinkServer

    /// `VarlinkServerService(admin)`, in the group's logs.
    var description: String { "VarlinkServerService(\(server.configuration.name))" }

    /// The server's state (``VarlinkServer/State``).
    var state: VarlinkServer.State { server.state }

    func run() async {
        let server = self.server
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await server.serve()
            } onGracefulShutdown: {
                server.quiesce()
            }
            // Drained before this service's turn: stay until the group gets to it.
            try? await gracefulShutdown()
        } onCancel: {
            server.quiesce()
            server.closeAll()
        }
    }
}
