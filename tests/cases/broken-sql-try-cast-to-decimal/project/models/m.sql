SELECT order_id, TRY_CAST(note AS DECIMAL(10, 2)) AS parsed FROM source('orders')
