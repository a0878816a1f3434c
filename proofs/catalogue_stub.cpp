// Keeps the pp_proofs library non-empty until the first proof lands.
namespace pp { void proofs_library_anchor() {} }
