#pragma once
// The `chunks` section of the JSON schedule format (issue 11):
//   "chunks": {"layers": 2,
//              "costs": {"attn_f": "1", "dispatch_f": "1.5", ..., "attn_w": "0.5"},   every layer
//              "layer_costs": [{"mlp_f": "2"}, {"mlp_f": "3"}],    optional: exactly one object per layer,
//                                                                  each overriding some keys of that layer
//              "slowdown": "1/4", "pp": "0.2",                     optional
//              "pattern": "deepseek" | {"compute": ["attn_f0", ...], "network": ["combine_b0", ...]}}
// Keys and meanings as model/chunk_costs.hpp; exact numbers as strings (or whole JSON numbers). Errors name
// the JSON pointer of the bad value, like every other structural error of the format.
#include "model/schedule.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace pp {

// Throws InputError (file, "at /chunks/...: message").
ChunkSpec chunks_from_json(const nlohmann::json& chunks, const std::string& file);
nlohmann::ordered_json chunks_to_json(const ChunkSpec& chunks);

}  // namespace pp
