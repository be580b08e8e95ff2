-- Customers with a limit whose tier is not blocked. A customer who becomes blocked no
-- longer matches: the join retracts their row, and nothing replaces it.
SELECT t.customer_id, t.tier, l.credit_limit
FROM source('customer_tiers') AS t
JOIN source('customer_limits') AS l ON t.customer_id = l.customer_id AND t.tier <> 'blocked'
