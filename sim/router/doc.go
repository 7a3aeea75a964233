// Package router is the simulated SGLang router (sglang_router's
// launch_router, the sgl-model-gateway): its command line, its health
// checks of the workers, and its routing of each request to a worker, or
// to a prefill and a decode worker at once under --pd-disaggregation. It
// talks to the workers over HTTP only, as the real one does, so it needs
// nothing of the server but the disaggregation modes' names.
package router
