WITH c AS (SELECT customer_id, tier FROM source('tiers'))
SELECT c.tier, COUNT(*) AS orders
FROM source('orders') AS o
JOIN c ON o.customer_id = c.customer_id
GROUP BY c.tier
