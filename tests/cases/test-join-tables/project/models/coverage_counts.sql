-- How many joined rows have a tier, a limit, or both (a FULL JOIN under a global aggregate).
SELECT COUNT(t.customer_id) AS with_tier, COUNT(l.customer_id) AS with_limit, COUNT(*) AS customers
FROM source('customer_tiers') AS t
FULL JOIN source('customer_limits') AS l ON t.customer_id = l.customer_id
