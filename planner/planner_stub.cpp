// Keeps the pp_planner library non-empty until the planner lands.
namespace pp { void planner_library_anchor() {} }
