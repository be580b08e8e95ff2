SELECT d, d + INTERVAL '1' DAY AS next_day FROM source('s')
