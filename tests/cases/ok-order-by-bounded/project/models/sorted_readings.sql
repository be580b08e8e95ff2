SELECT
    sensor,
    reading,
    taken_at
FROM source('readings')
WHERE reading >= 0
ORDER BY reading
