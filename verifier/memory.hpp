#pragma once
// Activation memory per rank. A rank's live activations change only at its own slots, and its slots run
// one after another, so the profile follows from the order alone (it does not depend on costs):
// allocations at slot start (a pair's F is counted before its backward releases), releases at slot end.
#include "model/costs.hpp"
#include "model/schedule.hpp"

#include <vector>

namespace pp {

// Live activations on this rank right after each slot's allocations, in ActivationModel units (per micro-batch: a
// sequence segment stashes 1/k of the sizes).
std::vector<Rational> activation_profile(const Schedule& schedule, int rank, const ActivationModel& activations);
// The maximum of the profile, per rank.
std::vector<Rational> peak_activations(const Schedule& schedule, const ActivationModel& activations = {});

}  // namespace pp
