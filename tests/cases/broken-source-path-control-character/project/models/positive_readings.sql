SELECT sensor, reading * 2 AS doubled, taken_at FROM source('readings') WHERE reading > 0
