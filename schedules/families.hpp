#pragma once
// One generator per family; each is defined in schedules/<family>.cpp.
#include "schedules/registry.hpp"

namespace pp {

Schedule generate_gpipe(const GenerateParams& params);
Schedule generate_1f1b(const GenerateParams& params);
Schedule generate_interleaved_1f1b(const GenerateParams& params);
Schedule generate_looped_bfs(const GenerateParams& params);
Schedule generate_group_interleaved(const GenerateParams& params);
Schedule generate_zb1p(const GenerateParams& params);
Schedule generate_zbv(const GenerateParams& params);
Schedule generate_zb_h1(const GenerateParams& params);
Schedule generate_zb_h2(const GenerateParams& params);
Schedule generate_dualpipe(const GenerateParams& params);
Schedule generate_dualpipev(const GenerateParams& params);
Schedule generate_chimera(const GenerateParams& params);
Schedule generate_combined_1f1b(const GenerateParams& params);
Schedule generate_v_min(const GenerateParams& params);
Schedule generate_v_half(const GenerateParams& params);
Schedule generate_v_zb(const GenerateParams& params);
Schedule generate_1f1b_v(const GenerateParams& params);
Schedule generate_seq1f1b(const GenerateParams& params);

// The generators above that run a step program, and their programs (ScheduleFamily::step_program).
FamilyStepProgram step_program_1f1b(const GenerateParams& params);
FamilyStepProgram step_program_zb_h1(const GenerateParams& params);
FamilyStepProgram step_program_zb_h2(const GenerateParams& params);
FamilyStepProgram step_program_dualpipe(const GenerateParams& params);
FamilyStepProgram step_program_dualpipev(const GenerateParams& params);
FamilyStepProgram step_program_chimera(const GenerateParams& params);
FamilyStepProgram step_program_interleaved_1f1b(const GenerateParams& params);
FamilyStepProgram step_program_zb1p(const GenerateParams& params);
FamilyStepProgram step_program_zbv(const GenerateParams& params);
FamilyStepProgram step_program_combined_1f1b(const GenerateParams& params);
FamilyStepProgram step_program_seq1f1b(const GenerateParams& params);
FamilyStepProgram step_program_group_interleaved(const GenerateParams& params);
// The generators that run a zone program (several growing runs per rank; ScheduleFamily::zone_program).
FamilyStepProgram zone_program_gpipe(const GenerateParams& params);
FamilyStepProgram zone_program_looped_bfs(const GenerateParams& params);

}  // namespace pp
