SELECT t.tier, COUNT(*) AS n FROM source('orders') AS o JOIN source('tiers') AS t ON o.customer_id = t.customer_id GROUP BY t.tier
