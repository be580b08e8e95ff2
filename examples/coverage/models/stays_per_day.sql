-- Stays per arrival day: a date as the key of an aggregate and of its upsert sink, and the
-- first day a stay on it was booked.
SELECT arrive_on, COUNT(*) AS stays, MIN(CAST(booked_at AS DATE)) AS first_booked_on
FROM source('stays')
WHERE arrive_on IS NOT NULL
GROUP BY arrive_on
