#pragma once

#include "kvbe/scenario/presets.h"
