"""Structural codes shared by the kernels and the Python layer (one definition each)."""

RESOURCES = ("wood", "stone", "food", "ore", "relics")
WOOD, STONE, FOOD, ORE, RELICS = range(5)
N_RES = 5

TERRAINS = ("grass", "forest", "rock", "berries", "ore_vein", "ruins", "water")
GRASS, FOREST, ROCK, BERRIES, ORE_VEIN, RUINS, WATER = range(7)

ACTIONS = ("wait", "move", "gather", "eat", "build", "craft", "offer", "accept", "decline", "raid", "say")
WAIT, MOVE, GATHER, EAT, BUILD, CRAFT, OFFER, ACCEPT, DECLINE, RAID, SAY = range(11)
N_ACTIONS = 11
NO_ACTION = -1  # an empty slot: the seat sent fewer actions than it may take

# Non-action events follow the actions; INVALID records a reply that named no valid action.
EVENT_KINDS = ACTIONS + ("invalid", "match_start", "spawn", "starve", "expire", "snapshot", "final",
                         "stock", "season_end")
(INVALID, MATCH_START, SPAWN, STARVE, EXPIRE, SNAPSHOT, FINAL, STOCK, SEASON_END) = range(11, 20)

REASONS = (
    "ok", "dead", "bad_direction", "blocked", "nothing_here", "inventory_full", "no_food", "full",
    "lacks_materials", "already_owned", "bad_target", "out_of_range", "bad_resource", "bad_quantity",
    "lacks_goods", "too_many_offers", "no_such_offer", "offerer_lacks_goods", "unknown_action",
    "bad_arguments",
)
(R_OK, R_DEAD, R_BAD_DIRECTION, R_BLOCKED, R_NOTHING_HERE, R_INVENTORY_FULL, R_NO_FOOD, R_FULL,
 R_LACKS_MATERIALS, R_ALREADY_OWNED, R_BAD_TARGET, R_OUT_OF_RANGE, R_BAD_RESOURCE, R_BAD_QUANTITY,
 R_LACKS_GOODS, R_TOO_MANY_OFFERS, R_NO_SUCH_OFFER, R_OFFERER_LACKS_GOODS, R_UNKNOWN_ACTION,
 R_BAD_ARGUMENTS) = range(20)

STOP_REASONS = ("season_end", "spend_cap", "cancelled", "failed")
WAIT_CAUSES = ("chosen", "timeout", "no_reply")
DIRECTIONS = ("north", "east", "south", "west")

POLICIES = ("honest-trader", "greedy-harvester", "aggressive-raider", "random")
HONEST_TRADER, GREEDY_HARVESTER, AGGRESSIVE_RAIDER, RANDOM = range(4)
EXTERNAL = -1

# Rule numbers reach the kernels as one float64 array P indexed by these names (values in rules.py).
PARAM_NAMES = (
    "health_max", "satiety_max", "hunger_per_tick", "starve_damage", "heal_above_satiety",
    "heal_per_tick", "eat_satiety", "carry_max", "gather_yield", "tool_gather_bonus", "offer_range",
    "offer_ttl", "offer_qty_max", "open_offers_max", "raid_base_odds", "raid_tool_bonus",
    "raid_shelter_penalty", "raid_odds_min", "raid_odds_max", "raid_share_divisor",
    "raid_effort_satiety", "raid_fail_satiety", "snapshot_every", "view_radius",
)
(P_HEALTH_MAX, P_SATIETY_MAX, P_HUNGER, P_STARVE_DAMAGE, P_HEAL_ABOVE, P_HEAL, P_EAT_SATIETY,
 P_CARRY_MAX, P_GATHER_YIELD, P_TOOL_BONUS, P_OFFER_RANGE, P_OFFER_TTL, P_OFFER_QTY_MAX,
 P_OPEN_OFFERS_MAX, P_RAID_BASE, P_RAID_TOOL, P_RAID_SHELTER, P_RAID_MIN, P_RAID_MAX, P_RAID_DIVISOR,
 P_RAID_EFFORT, P_RAID_FAIL, P_SNAPSHOT_EVERY, P_VIEW_RADIUS) = range(24)

# What build and craft make (rules.RECIPES): item k is made by action BUILD + k and owned in
# column A_SHELTER + k of the agent table.
ITEMS = ("shelter", "tool")
SHELTER, TOOL = range(2)
N_ITEMS = 2

# Column layouts of the packed state tables (state.py).
DIR_DX = (0, 1, 0, -1)
DIR_DY = (-1, 0, 1, 0)

T_POOL, T_TOUCHED, T_CAP, T_REGEN = range(4)  # tiles float64[H, W, 4]
(A_X, A_Y, A_HEALTH, A_SATIETY, A_INV, _I1, _I2, _I3, _I4, A_SHELTER, A_TOOL, A_ALIVE, A_DEATH, A_POLICY,
 A_MEM) = range(15)  # ag int64[N, A_COLS]; inventory A_INV..A_INV+4; policy memory A_MEM..A_MEM+5
A_COLS = A_MEM + 6
M_TX, M_TY, M_TRES, M_RESCAN, M_VICTIM, M_VICTIM_UNTIL = range(A_MEM, A_MEM + 6)
O_ID, O_SRC, O_DST, O_GIVE_R, O_GIVE_Q, O_WANT_R, O_WANT_Q, O_EXPIRES = range(8)  # offers int64[K, 8]
OC_IN, OC_OUT, OC_BOX = range(3)  # ocount int64[N, 2 + words]: open offers to / from each agent, then
# the agent's inbox: bit k of word OC_BOX + k // 64 is set while offer slot k is addressed to it
META_ROWS, META_NEXT_OFFER = range(2)  # meta int64[2]
L_TICK, L_AGENT, L_KIND, L_OK, L_REASON, L_A, L_B, L_C, L_D, L_E, L_F, L_G = range(12)  # logi int32[C, 12]
# After the named numbers P holds the tables: P[P_PRICE + r] each resource's value,
# P[P_COST + k * N_RES + r] what item k costs of resource r, P[P_ITEM_VALUE + k] item k's value.
P_PRICE = len(PARAM_NAMES)
P_COST = P_PRICE + N_RES
P_ITEM_VALUE = P_COST + N_ITEMS * N_RES
