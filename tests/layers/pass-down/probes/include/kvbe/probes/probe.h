#pragma once

#include "kvbe/scenario/scenario.h"
